/**
 * Teacher-forced verification (protocol `verify` jobs): the claimed model evaluates a prompt and a
 * completion someone else generated, in one batched pass, and says for each completion token how
 * likely it found it and whether it was among its `topK` most likely. A completion sampled from
 * these weights scores high at any temperature; one sampled from other weights does not.
 */
import type { ControlledEvaluateInputItem, LlamaContextSequence, Token } from 'node-llama-cpp';

export type VerifyTokensInput = {
  /** The prompt exactly as the generator evaluated it (BOS and template included). */
  promptTokens: readonly Token[];
  /** The completion's token ids, in order. */
  completionTokens: readonly Token[];
  /** "In the top k" for this k. */
  topK: number;
};

export type VerifiedTokens = {
  /** Natural log-probability of each completion token under the model (temperature 1, no truncation). */
  logprobs: number[];
  /** Whether each completion token was among the model's `topK` most likely next tokens. */
  inTopK: boolean[];
  /** The log-probability of the k-th most likely next token at each position (how near the top-k edge a token is). */
  kthLogprobs: number[];
};

/** Sampling options that leave the distribution as the model gives it. */
const RAW = { temperature: 1, topK: 0, topP: 1, minP: 0 } as const;

/**
 * Evaluates `promptTokens + completionTokens` on `sequence` (its state is replaced) and reads the
 * next-token distribution before each completion token: only the chosen token's logit, the top k
 * and the total weight, never the whole vocabulary.
 */
export async function verifyTokens(
  sequence: LlamaContextSequence,
  input: VerifyTokensInput,
): Promise<VerifiedTokens> {
  const { promptTokens, completionTokens, topK } = input;
  if (promptTokens.length === 0 || completionTokens.length === 0)
    return { logprobs: [], inTopK: [], kthLogprobs: [] };
  await sequence.clearHistory();
  const items: ControlledEvaluateInputItem[] = [...promptTokens.slice(0, -1)];
  // The logits after position i predict completion token i.
  const predictors = [promptTokens.at(-1)!, ...completionTokens.slice(0, -1)];
  predictors.forEach((token, i) => {
    items.push([
      token,
      {
        generateNext: {
          logits: { filter: { tokens: [completionTokens[i]!], includeMax: true, includeTop: topK } },
          totalLogitWeight: true,
          options: RAW,
        },
      },
    ]);
  });
  const output = await sequence.controlledEvaluate(items);
  const logprobs: number[] = [];
  const inTopK: boolean[] = [];
  const kthLogprobs: number[] = [];
  completionTokens.forEach((token, i) => {
    const next = output[promptTokens.length - 1 + i]?.next;
    const logits = next?.logits;
    const weight = next?.totalLogitWeight;
    const chosen = logits?.get(token);
    if (!logits || weight === undefined || chosen === undefined) {
      logprobs.push(Number.NEGATIVE_INFINITY);
      inTopK.push(false);
      kthLogprobs.push(Number.NEGATIVE_INFINITY);
      return;
    }
    const sorted = [...logits.values()].sort((a, b) => b - a);
    const max = sorted[0]!;
    const logprob = (logit: number) => logit - max - Math.log(weight);
    logprobs.push(logprob(chosen));
    kthLogprobs.push(logprob(sorted[Math.min(topK, sorted.length) - 1]!));
    // The map holds the top k and the chosen token: the tokens strictly more likely give its rank.
    inTopK.push(sorted.filter((logit) => logit > chosen).length < topK);
  });
  return { logprobs, inTopK, kthLogprobs };
}

/** What a verifier concludes from one completion (see NODE_PROTOCOL.md "Verification"). */
export type VerificationSummary = { tokens: number; meanLogprob: number; topKFraction: number };

export function summarize(verified: VerifiedTokens): VerificationSummary {
  const n = verified.logprobs.length;
  if (n === 0) return { tokens: 0, meanLogprob: 0, topKFraction: 1 };
  // A token the model gives no weight at all counts as e^-30 (≈ 1e-13), so one can't dominate.
  const floor = -30;
  const sum = verified.logprobs.reduce((s, x) => s + Math.max(x, floor), 0);
  return { tokens: n, meanLogprob: sum / n, topKFraction: verified.inTopK.filter(Boolean).length / n };
}

/**
 * A completion passes when both hold (top-k with k = 8). Calibrated on the generated test models
 * (outputStd 0.5, mean next-token entropy ≈ 2 nats) for sampling at temperatures 0 to 1.5: honest
 * completions scored a mean logprob ≥ −2.9 and ≥ 69 % in the top 8; another model's ≤ −7.1 and
 * ≤ 6 %. A model with flatter distributions needs its own calibration (NODE_PROTOCOL.md).
 */
export const VERIFY_THRESHOLDS = { minMeanLogprob: -5, minTopKFraction: 0.4 } as const;
