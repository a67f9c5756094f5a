/**
 * Reading a verifier's answer (NODE_PROTOCOL.md "Verification") and deciding: a completion passes
 * when its mean log-probability under the claimed weights (each token floored at −30) and the
 * share of its tokens in the verifier's top k both reach the thresholds.
 */

export type Thresholds = { minMeanLogprob: number; minTopKFraction: number };

export type Judgement = { tokens: number; meanLogprob: number; topKFraction: number; passed: boolean };

/** A token the model gives no weight at all counts as e^−30, so one can't dominate the mean. */
const LOGPROB_FLOOR = -30;

/**
 * The judgement of a `verify` result for `tokens` completion tokens, or undefined when the answer
 * is malformed (wrong lengths, non-numbers, a probability above 1): a verifier that answers out of
 * protocol decides nothing.
 */
export function judge(
  response: Record<string, unknown>,
  tokens: number,
  thresholds: Thresholds,
): Judgement | undefined {
  const { logprobs, in_top_k: inTopK } = response;
  if (!Array.isArray(logprobs) || logprobs.length !== tokens || tokens === 0) return undefined;
  if (typeof inTopK !== 'string' || inTopK.length !== tokens || !/^[01]*$/.test(inTopK)) return undefined;
  let sum = 0;
  for (const x of logprobs) {
    if (typeof x !== 'number' || Number.isNaN(x) || x > 1e-3) return undefined;
    sum += Math.max(x, LOGPROB_FLOOR);
  }
  const meanLogprob = sum / tokens;
  const topKFraction = [...inTopK].filter((c) => c === '1').length / tokens;
  return {
    tokens,
    meanLogprob,
    topKFraction,
    passed: meanLogprob >= thresholds.minMeanLogprob && topKFraction >= thresholds.minTopKFraction,
  };
}
