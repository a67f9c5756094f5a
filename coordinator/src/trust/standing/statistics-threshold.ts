/**
 * The decision over k statistics of one node (issue 40 point 7): today's ln e-value and, for each
 * cheaper pinned quantization of the claimed weights the coordinator's verifier holds, the check's
 * ln q/p (checks/substitution-ratio.ts). Each is an e-value under the honest claim and runs its own
 * CUSUM; the node is convicted when any reaches T + ln k, T = CONVICTION_THRESHOLD. Each crosses
 * falsely with probability ≤ e^−(T + ln k) a check (Ville), so all k together ≤ e^−T: the bound of
 * one statistic, ≤ 10⁻⁶ false convictions a node a day, holds unchanged. With k = 1 this is
 * @gpumesh/protocol `accumulate` at T exactly. One implementation: bench/substitution-evidence.ts
 * draws its conviction curves with these.
 */
import { CONVICTION_THRESHOLD } from '@gpumesh/protocol/internal';

/** Where each of k statistics convicts: T + ln k. */
export function thresholdOf(k: number): number {
  return CONVICTION_THRESHOLD + Math.log(Math.max(1, k));
}

/**
 * One statistic's running evidence after one more check: W ← max(0, W) + min(step, cap), the cap
 * half the threshold as with one statistic — no single check convicts, two failed outright do.
 */
export function accumulateOf(previous: number, step: number, k: number): number {
  return Math.max(0, previous) + Math.min(step, thresholdOf(k) / 2);
}
