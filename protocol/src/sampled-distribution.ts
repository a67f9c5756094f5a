/**
 * The distribution a node samples a token from, given the model's raw logits and the job's
 * sampling settings (NODE_PROTOCOL.md §9 "Sampling"), and what a verifier reports about the token
 * a node chose there (§9 "Verification"). One definition for the node that samples, the verifier
 * that checks and the conformance kit; the order is llama.cpp's sampler chain: logit bias,
 * penalties, then top-k, top-p, min-p on the temperature-1 logits, then temperature.
 */

/** A job's sampling settings, as a `verify` job's `request.sampling` carries them. */
export type Sampling = {
  /** 0: greedy (the most likely token, the lowest id on a tie). */
  temperature: number;
  /** Keep the k most likely tokens; 0 or absent: all. */
  topK?: number;
  /** Keep the fewest most likely tokens whose probability sums to at least this; absent or 1: all. */
  topP?: number;
  /** Keep tokens at least this times as likely as the most likely; absent or 0: all. */
  minP?: number;
  /** Subtracted once from the logit of a token among the last 256 completion tokens. */
  presencePenalty?: number;
  /** Subtracted from a token's logit per time it occurs among the last 256 completion tokens. */
  frequencyPenalty?: number;
  /** Token id (decimal) → added to its logit; −100 or less bans the token. */
  logitBias?: Record<string, number>;
};

/** How many of the previous completion tokens the penalties look back over. */
export const PENALTY_WINDOW_TOKENS = 256;

/** What a verifier reports at one completion position (4 decimals on the wire). */
export type SampledPosition = {
  /** ln p(chosen) under the processed distribution; null when the sampler could not have kept it. */
  sampledLogprob: number | null;
  /** Entropy of the processed distribution, nats: the expected −ln p of a sampled token. */
  entropy: number;
  /** Variance of −ln p of a sampled token. */
  entropyVar: number;
  /** Probability mass of the processed distribution's `topK` most likely tokens. */
  topKMass: number;
  /** 0 when the chosen token was kept; else how far (nats, before temperature) its logit fell below the lowest kept. */
  edgeGap: number;
};

/**
 * The processed distribution at one position and the chosen token's place in it. `logits[t]` is
 * token t's raw logit; `previous` the completion tokens before this position (for the penalties).
 */
export function sampledPosition(
  logits: ArrayLike<number>,
  chosen: number,
  previous: readonly number[],
  sampling: Sampling,
  topK: number,
): SampledPosition {
  const l = adjustedLogits(logits, previous, sampling);
  const keptIds = keptTokens(l, sampling);
  let lowest = Number.POSITIVE_INFINITY;
  for (const id of keptIds) lowest = Math.min(lowest, l[id]!);
  const isKept = keptIds.includes(chosen) && l[chosen]! > Number.NEGATIVE_INFINITY;
  const edgeGap = isKept ? 0 : lowest - l[chosen]!;
  if (sampling.temperature <= 0) {
    return { sampledLogprob: isKept ? 0 : null, entropy: 0, entropyVar: 0, topKMass: 1, edgeGap };
  }
  const t = sampling.temperature;
  let max = Number.NEGATIVE_INFINITY;
  for (const id of keptIds) max = Math.max(max, l[id]! / t);
  let z = 0;
  for (const id of keptIds) z += Math.exp(l[id]! / t - max);
  const logZ = Math.log(z);
  let entropy = 0;
  let second = 0;
  const probabilities: number[] = [];
  for (const id of keptIds) {
    const lp = l[id]! / t - max - logZ;
    if (lp === Number.NEGATIVE_INFINITY) continue;
    const p = Math.exp(lp);
    entropy -= p * lp;
    second += p * lp * lp;
    probabilities.push(p);
  }
  return {
    sampledLogprob: isKept ? l[chosen]! / t - max - logZ : null,
    entropy,
    entropyVar: Math.max(0, second - entropy * entropy),
    topKMass: Math.min(1, largestSum(probabilities, topK)),
    edgeGap,
  };
}

/** The sum of the `k` largest of `values`. */
function largestSum(values: number[], k: number): number {
  if (k >= values.length) return values.reduce((s, x) => s + x, 0);
  return values
    .sort((a, b) => b - a)
    .slice(0, k)
    .reduce((s, x) => s + x, 0);
}

/** Raw logits with the logit bias and the penalties applied (a copy). */
function adjustedLogits(logits: ArrayLike<number>, previous: readonly number[], s: Sampling): Float64Array {
  const l = Float64Array.from(logits);
  for (const [id, bias] of Object.entries(s.logitBias ?? {})) {
    const t = Number(id);
    if (t >= 0 && t < l.length) l[t] = bias <= -100 ? Number.NEGATIVE_INFINITY : l[t]! + bias;
  }
  const presence = s.presencePenalty ?? 0;
  const frequency = s.frequencyPenalty ?? 0;
  if (presence !== 0 || frequency !== 0) {
    const counts = new Map<number, number>();
    for (const t of previous.slice(-PENALTY_WINDOW_TOKENS)) counts.set(t, (counts.get(t) ?? 0) + 1);
    for (const [t, c] of counts) if (t < l.length) l[t] = l[t]! - frequency * c - presence;
  }
  return l;
}

/**
 * The token ids the sampler keeps. Every id when nothing truncates (no sort: the common case);
 * else ranked from the most likely (the lower id first on a tie) and cut by top-k, top-p, min-p.
 */
function keptTokens(l: Float64Array, s: Sampling): number[] {
  const greedy = s.temperature <= 0;
  const truncates = greedy || (s.topK ?? 0) > 0 || (s.topP ?? 1) < 1 || (s.minP ?? 0) > 0;
  // A banned token (−∞) is never kept, unless every token is banned.
  const ids = Array.from(l.keys()).filter((t) => l[t]! > Number.NEGATIVE_INFINITY);
  if (ids.length === 0) return [0];
  if (!truncates) return ids;
  ids.sort((a, b) => l[b]! - l[a]! || a - b);
  if (greedy) return ids.slice(0, 1);
  let kept = ids.length;
  if (s.topK && s.topK > 0) kept = Math.min(kept, s.topK);
  const max = l[ids[0]!]!;
  if (s.topP !== undefined && s.topP < 1) {
    let z = 0;
    for (let i = 0; i < kept; i++) z += Math.exp(l[ids[i]!]! - max);
    let sum = 0;
    for (let i = 0; i < kept; i++) {
      sum += Math.exp(l[ids[i]!]! - max) / z;
      if (sum >= s.topP) {
        kept = i + 1;
        break;
      }
    }
  }
  if (s.minP && s.minP > 0) {
    const floor = max + Math.log(s.minP);
    let i = 1;
    while (i < kept && l[ids[i]!]! >= floor) i++;
    kept = i;
  }
  return ids.slice(0, kept);
}
