/**
 * Teacher-forced verification (protocol `verify` jobs): the claimed model evaluates a prompt and a
 * completion someone else generated, in one batched pass, and describes each completion position:
 * the token's raw log-probability and rank, and — given the generator's sampling settings (v0.2) —
 * the distribution it was sampled from after bias, penalties, truncation and temperature
 * (@gpumesh/protocol `sampledPosition`): the token's log-probability there, the entropy and its
 * variance, the top-k mass, how far outside the kept tokens it fell.
 */
import { type SampledPosition, type Sampling, sampledPosition } from '@gpumesh/protocol';
import type { ControlledEvaluateInputItem, LlamaContextSequence, Token } from 'node-llama-cpp';

export type VerifyTokensInput = {
  /** The prompt exactly as the generator evaluated it (BOS and template included). */
  promptTokens: readonly Token[];
  /** The completion's token ids, in order. */
  completionTokens: readonly Token[];
  /** "In the top k" for this k. */
  topK: number;
  /** The generator's sampling settings (v0.2); without them only the raw fields are read. */
  sampling?: Sampling;
};

export type VerifiedTokens = {
  /** Natural log-probability of each completion token under the model (temperature 1, no truncation). */
  logprobs: number[];
  /** Whether each completion token was among the model's `topK` most likely next tokens. */
  inTopK: boolean[];
  /** The log-probability of the k-th most likely next token at each position (how near the top-k edge a token is). */
  kthLogprobs: number[];
  /** Each position under the sampling settings, when they were given. */
  sampled?: SampledPosition[];
};

/** Sampling options that leave the distribution as the model gives it. */
const RAW = { temperature: 1, topK: 0, topP: 1, minP: 0 } as const;

/**
 * Evaluates `promptTokens + completionTokens` on `sequence` (its state is replaced) and reads the
 * next-token distribution before each completion token: with sampling settings every logit (the
 * processed distribution needs them all), else only the chosen token's, the top k and the total.
 */
export async function verifyTokens(
  sequence: LlamaContextSequence,
  input: VerifyTokensInput,
): Promise<VerifiedTokens> {
  const { promptTokens, completionTokens, topK, sampling } = input;
  if (promptTokens.length === 0 || completionTokens.length === 0)
    return { logprobs: [], inTopK: [], kthLogprobs: [], ...(sampling ? { sampled: [] } : {}) };
  await sequence.clearHistory();
  const items: ControlledEvaluateInputItem[] = [...promptTokens.slice(0, -1)];
  // The logits after position i predict completion token i.
  const predictors = [promptTokens.at(-1)!, ...completionTokens.slice(0, -1)];
  predictors.forEach((token, i) => {
    items.push([
      token,
      {
        generateNext: {
          logits: sampling
            ? true
            : { filter: { tokens: [completionTokens[i]!], includeMax: true, includeTop: topK } },
          totalLogitWeight: true,
          options: RAW,
        },
      },
    ]);
  });
  const output = await sequence.controlledEvaluate(items);
  const out: VerifiedTokens = {
    logprobs: [],
    inTopK: [],
    kthLogprobs: [],
    ...(sampling ? { sampled: [] } : {}),
  };
  completionTokens.forEach((token, i) => {
    const next = output[promptTokens.length - 1 + i]?.next;
    const logits = next?.logits;
    const weight = next?.totalLogitWeight;
    const chosen = logits?.get(token);
    if (!logits || weight === undefined || chosen === undefined) {
      out.logprobs.push(Number.NEGATIVE_INFINITY);
      out.inTopK.push(false);
      out.kthLogprobs.push(Number.NEGATIVE_INFINITY);
      out.sampled?.push({ sampledLogprob: null, entropy: 0, entropyVar: 0, topKMass: 1, edgeGap: 1e9 });
      return;
    }
    // The map is sorted from the highest logit.
    const top = [...logits.values()].slice(0, Math.max(topK, 1));
    const max = top[0]!;
    const logprob = (logit: number) => logit - max - Math.log(weight);
    out.logprobs.push(logprob(chosen));
    out.kthLogprobs.push(logprob(top[Math.min(topK, top.length) - 1]!));
    out.inTopK.push(rankOf(logits, chosen) < topK);
    if (sampling) {
      let size = 0;
      for (const t of logits.keys()) size = Math.max(size, t + 1);
      const dense = new Float64Array(size).fill(Number.NEGATIVE_INFINITY);
      for (const [t, logit] of logits) dense[t] = logit;
      out.sampled!.push(sampledPosition(dense, token, completionTokens.slice(0, i), sampling, topK));
    }
  });
  return out;
}

/** How many logits of the (sorted) map are strictly above `logit`. */
function rankOf(logits: Map<Token, number>, logit: number): number {
  let rank = 0;
  for (const value of logits.values()) {
    if (value <= logit) break;
    rank++;
  }
  return rank;
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
