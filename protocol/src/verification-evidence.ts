/**
 * How much one verified completion says against "these tokens were sampled from the claimed
 * weights under the job's own settings" (NODE_PROTOCOL.md §9 "Deciding"): an e-value, a number
 * whose expectation is at most 1 when the node is honest, whatever the model, its entropy or the
 * temperature. Products of e-values of successive checks stay e-values, so evidence can be
 * accumulated over checks and a threshold 1/α is crossed by an honest node with probability ≤ α
 * (Ville's inequality).
 *
 * Per position the verifier gives the token's log-probability ln p under the processed
 * distribution, that distribution's entropy H and the variance V of −ln p. Under the null
 * Y = −ln p − H has mean 0 and variance V. We use X = min(Y − δ, c): δ allows for numerics
 * across hardware, c bounds a position's weight; then E[X] ≤ 0, X ≤ c and E[X²] ≤ V + δ², and
 * Bennett's lemma gives E[exp(λX − ψ(λ)(V + δ²))] ≤ 1 with ψ(λ) = (e^{λc} − 1 − λc)/c². The
 * e-value of a completion is that product over its positions, averaged over a fixed grid of λ
 * (an average of e-values is one), so quiet and noisy positions both weigh. A token the sampler
 * could not have kept counts X = c (no variance allowance), unless it sits within
 * `edgeTolerance` nats of the kept set's edge (cross-hardware numerics): then it counts 0.
 */

export type EvidenceSettings = {
  /** Nats per token allowed for numerics (logits differ slightly across hardware and builds). */
  delta: number;
  /** The most one position can weigh, nats. */
  cap: number;
  /** A token outside the kept set by at most this many nats (before temperature) counts as kept. */
  edgeTolerance: number;
  /** The grid of λ the e-value averages over. */
  lambdas: readonly number[];
};

export const EVIDENCE_SETTINGS: EvidenceSettings = {
  delta: 0.05,
  cap: 8,
  edgeTolerance: 0.5,
  lambdas: [1 / 32, 1 / 16, 1 / 8, 1 / 4, 1 / 2, 1],
};

/** One position as a verifier reports it (v0.2 fields). */
export type EvidencePosition = {
  sampledLogprob: number | null;
  entropy: number;
  entropyVar: number;
  edgeGap: number;
};

export type Evidence = {
  /** ln of the completion's e-value: > 0 counts against the node, < 0 for it. */
  logE: number;
  /** Positions scored. */
  tokens: number;
  /** Mean of −ln p − H over the kept tokens (≈ 0 for honest sampling, nats). */
  meanExcess: number;
  /** Tokens outside the kept set beyond the tolerance. */
  outside: number;
};

/** The evidence of one completion against its claimed weights and sampling. */
export function completionEvidence(
  positions: readonly EvidencePosition[],
  settings: EvidenceSettings = EVIDENCE_SETTINGS,
): Evidence {
  const { delta, cap, edgeTolerance, lambdas } = settings;
  let sumX = 0;
  let sumV = 0;
  let excess = 0;
  let kept = 0;
  let outside = 0;
  for (const p of positions) {
    if (p.sampledLogprob === null || !Number.isFinite(p.sampledLogprob)) {
      if (p.edgeGap > edgeTolerance) {
        sumX += cap;
        outside++;
      }
      continue;
    }
    const y = -p.sampledLogprob - p.entropy;
    excess += y;
    kept++;
    sumX += Math.min(y - delta, cap);
    sumV += p.entropyVar + delta * delta;
  }
  const logs = lambdas.map((lambda) => lambda * sumX - psi(lambda, cap) * sumV);
  return {
    logE: logMeanExp(logs),
    tokens: positions.length,
    meanExcess: kept > 0 ? excess / kept : 0,
    outside,
  };
}

/** Bennett's ψ for increments bounded by c. */
function psi(lambda: number, c: number): number {
  const u = lambda * c;
  return (Math.exp(u) - 1 - u) / (c * c);
}

function logMeanExp(values: readonly number[]): number {
  const max = Math.max(...values);
  const sum = values.reduce((s, x) => s + Math.exp(x - max), 0);
  return max + Math.log(sum / values.length);
}

/**
 * The decision over a node's checks: a CUSUM of the checks' ln e-values, each capped at half the
 * threshold so no single check convicts: W ← max(0, W) + min(ln E, T/2), convicted when W ≥ T.
 * W ≥ T means some run of consecutive checks has a product of e-values ≥ e^T, which for an honest
 * node happens from a given start with probability ≤ e^−T; so the expected number of false
 * convictions of an honest node per day is at most (its checks per day) × e^−T. With at most
 * `MAX_CHECKS_PER_NODE_DAY` checks a day and T = ln(10⁵ / 10⁻⁶), that is ≤ 10⁻⁶ per node per day.
 * Honest checks have E[ln E] < 0, so W drifts back to 0: old evidence decays.
 */
export const MAX_CHECKS_PER_NODE_DAY = 100_000;
export const FALSE_CONVICTION_BOUND_PER_DAY = 1e-6;
export const CONVICTION_THRESHOLD = Math.log(MAX_CHECKS_PER_NODE_DAY / FALSE_CONVICTION_BOUND_PER_DAY);
/** The most one check adds (a check the node failed outright counts this much). */
export const CHECK_CAP = CONVICTION_THRESHOLD / 2;

/** The node's running evidence after one more check. */
export function accumulate(previous: number, logE: number): number {
  return Math.max(0, previous) + Math.min(logE, CHECK_CAP);
}
