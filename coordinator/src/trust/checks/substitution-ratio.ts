/**
 * The substitution statistics of a check (issue 40 point 7): a node that claims some weights and
 * serves a cheaper quantization of them (Q4_0 behind an F16 claim) shows today's statistic an
 * excess of about KL(q‖p) a token — a few hundredths of a nat, under the δ it allows for numerics.
 * So for each cheaper quantization q the catalog pins for the claimed file (catalog.ts
 * `cheaperThan`) and the coordinator's own verifier holds, the completion's ids are teacher-forced
 * on q too, under the job's own processed sampling distributions, and the check's likelihood ratio
 * Π_t q_s(x_t) / p_s(x_t) is its statistic. Under the honest claim E_p[q_s/p_s] = Σ_{x kept by p}
 * q_s(x) ≤ 1, so each is an e-value; each runs its own CUSUM (standing/statistics-threshold.ts).
 * Against q's own tokens it grows by KL(q_s‖p_s) a token, the most any test can (Wald).
 *
 * Run on the coordinator's verifier only, p included: a network verifier could frame an honest
 * node with a low p where no second opinion looks. Files it does not hold: the statistic is absent
 * and k is smaller.
 */
import type { LocalVerifier } from './local-verifier.js';

/** The most negative ln ratio kept (a token q could not have drawn; JSON has no −∞). */
export const LOG_RATIO_FLOOR = -1e6;

/** A cheaper quantization of the claimed weights, as the coordinator's verifier serves it. */
export type Substitute = { quant: string; sha256: string; model: string };

/**
 * Σ_t ln q_s(x_t) − ln p_s(x_t) over the positions p keeps (sampled log-probabilities of the
 * processed distributions, null outside the kept set — today's e-value's part): a token q could not
 * have drawn gives the floor.
 */
export function logRatio(claimed: readonly (number | null)[], cheaper: readonly (number | null)[]): number {
  let sum = 0;
  for (let i = 0; i < claimed.length; i++) {
    const p = claimed[i];
    const q = cheaper[i];
    if (p === null || p === undefined) continue;
    if (q === null || q === undefined) return LOG_RATIO_FLOOR;
    sum += q - p;
  }
  return Math.max(LOG_RATIO_FLOOR, sum);
}

/**
 * ln q/p of one completion for each substitute, keyed by quant: the verify `request` (the claimed
 * file's, the job's own sampling settings) run on the coordinator's verifier on the claimed model
 * (unless `claimed` already holds its sampled log-probabilities) and on each substitute; the first
 * `from` completion tokens are not scored (another node's, judge.ts `scoredFrom`). A substitute the
 * verifier fails on counts 0 (no evidence).
 */
export async function substitutionRatios(
  local: LocalVerifier,
  claimedModel: string,
  substitutes: readonly Substitute[],
  request: Record<string, unknown>,
  { claimed, from }: { claimed?: readonly (number | null)[] | undefined; from: number },
): Promise<Record<string, number>> {
  const sampled = async (model: string, sha256: unknown) => {
    const response = await local.verify(model, { ...request, sha256 });
    return (response.sampled_logprobs as (number | null)[]).slice(from);
  };
  const p = claimed
    ? claimed.slice(from)
    : await sampled(claimedModel, request.sha256).catch(() => undefined);
  const out: Record<string, number> = {};
  for (const s of substitutes) {
    const q = p && (await sampled(s.model, s.sha256).catch(() => undefined));
    out[s.quant] = p && q ? logRatio(p, q) : 0;
  }
  return out;
}
