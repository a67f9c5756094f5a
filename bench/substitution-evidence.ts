/**
 * The two statistics the substitution study compares (bench/substitution.ts), and the conviction
 * curve of a run of checks.
 *
 * Current: the check's e-value as the coordinator computes it today (trust/judge.ts,
 * @gpumesh/protocol `completionEvidence`): −ln p − H against its variance, with δ = 0.05 nats a
 * token for numerics, accumulated by a CUSUM convicting at T = ln(10⁵/10⁻⁶). Against the same
 * weights at a cheaper quantization its power is small: the excess a Q4 liar's tokens show is about
 * KL(q‖p), a few hundredths of a nat a token, below δ.
 *
 * Proposed: beside it, for each of the k − 1 cheaper quantizations q of the claimed weights the
 * catalog pins, the likelihood ratio Π_t q_s(x_t) / p_s(x_t) of the check's completion under the
 * job's own processed distributions (the verifier teacher-forces the ids on the cheaper file too).
 * Under the claim E_p[q_s/p_s] = Σ_{x kept by p} q_s(x) ≤ 1, so each check's ratio is an e-value;
 * each of the k statistics runs its own CUSUM (each check capped at half the threshold, as today) and
 * the node is convicted when any reaches T + ln k. Each crosses falsely with probability ≤ e^−(T + ln k) a check
 * (Ville), so together ≤ e^−T: the false-conviction bound, ≤ 10⁻⁶ a node a day, is unchanged.
 * Against q's own tokens the ratio grows by KL(q_s‖p_s) a token, the most any test can (Wald): the
 * fewest tokens that can convict are about (T + ln k) / KL.
 *
 * The coordinator runs the proposed statistic since session 21: the ratio is its
 * trust/checks/substitution-ratio.ts `logRatio`, the k CUSUMs its trust/standing/statistics-threshold.ts.
 */
import { accumulate, CONVICTION_THRESHOLD } from '@gpumesh/protocol/internal';
import { accumulateOf, thresholdOf } from '../coordinator/src/trust/standing/statistics-threshold.js';

/** One check's statistics: ln E (current), and ln q_s/p_s for each cheaper quantization (proposed). */
export type CheckEvidence = { logE: number; ratios: readonly number[] };

/** The current statistic's CUSUM: the index (1-based) of the check that convicts, or 0. */
export function convictedAt(checks: readonly CheckEvidence[]): number {
  let w = 0;
  for (let i = 0; i < checks.length; i++) {
    w = accumulate(w, checks[i]!.logE);
    if (w >= CONVICTION_THRESHOLD) return i + 1;
  }
  return 0;
}

/** The proposed statistic's k CUSUMs: the index (1-based) of the check at which any reaches T + ln k, or 0. */
export function proposedConvictedAt(checks: readonly CheckEvidence[]): number {
  const k = 1 + Math.max(0, ...checks.map((c) => c.ratios.length));
  const threshold = thresholdOf(k);
  const w = new Array<number>(k).fill(0);
  for (let i = 0; i < checks.length; i++) {
    const { logE, ratios } = checks[i]!;
    const steps = [logE, ...ratios];
    for (let j = 0; j < k; j++) {
      w[j] = accumulateOf(w[j]!, steps[j] ?? 0, k);
      if (w[j]! >= threshold) return i + 1;
    }
  }
  return 0;
}

/** The highest running evidence of each statistic and how many times each convicts (restarted after). */
export function honestRuns(checks: readonly CheckEvidence[]): {
  current: { convictions: number; highest: number };
  proposed: { convictions: number; highest: number; threshold: number };
} {
  const current = { convictions: 0, highest: 0 };
  let w = 0;
  for (const c of checks) {
    w = accumulate(w, c.logE);
    current.highest = Math.max(current.highest, w);
    if (w >= CONVICTION_THRESHOLD) {
      current.convictions++;
      w = 0;
    }
  }
  const k = 1 + Math.max(0, ...checks.map((c) => c.ratios.length));
  const threshold = thresholdOf(k);
  const proposed = { convictions: 0, highest: 0, threshold };
  let ws = new Array<number>(k).fill(0);
  for (const c of checks) {
    const steps = [c.logE, ...c.ratios];
    ws = ws.map((x, j) => accumulateOf(x, steps[j] ?? 0, k));
    proposed.highest = Math.max(proposed.highest, ...ws);
    if (ws.some((x) => x >= threshold)) {
      proposed.convictions++;
      ws = ws.map(() => 0);
    }
  }
  return { current, proposed };
}

/**
 * P(convicted within n checks) for each n of `at`, by resampling the measured checks (with
 * replacement, seeded): the curve of a liar whose single run did not reach the threshold early.
 */
export function convictionCurve(
  checks: readonly CheckEvidence[],
  rule: (run: readonly CheckEvidence[]) => number,
  at: readonly number[],
  random: () => number,
  runs = 1_000,
): { checks: number; probability: number }[] {
  const longest = Math.max(...at);
  const firsts: number[] = [];
  for (let r = 0; r < runs && checks.length > 0; r++) {
    const run = Array.from({ length: longest }, () => checks[Math.floor(random() * checks.length)]!);
    firsts.push(rule(run));
  }
  return at.map((n) => ({
    checks: n,
    probability: firsts.filter((f) => f > 0 && f <= n).length / Math.max(1, firsts.length),
  }));
}
