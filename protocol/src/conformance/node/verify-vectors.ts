import { readFileSync } from 'node:fs';
import type { Sampling } from '../../sampled-distribution.js';

/** One reference verification: the kit model's scores of a completion (protocol/vectors/verify/). */
export type VerifyVectorCase = {
  name: string;
  description: string;
  promptTokenIds: number[];
  completionTokenIds: number[];
  /** Each completion token's log-probability under the kit model, 4 decimals. */
  logprobs: number[];
  in_top_k: string;
  /** The k-th largest log-probability at each position: a token within the tolerance of it may fall either side of the top-k edge. */
  kthLogprobs: number[];
  /**
   * v0.2: the generator's sampling settings, sent as the request's `sampling`; the fields below are
   * then the kit model's answer under them (NODE_PROTOCOL.md §9 "Sampling").
   */
  sampling?: Sampling;
  /** ln p of each token under the processed distribution, 4 decimals; null where it was not kept. */
  sampled_logprobs?: (number | null)[];
  /** The processed distribution's entropy at each position, nats. */
  entropy?: number[];
  /** The variance of −ln p of a token sampled there, nats². */
  entropy_var?: number[];
  /** The processed distribution's mass on its `topK` most likely tokens. */
  top_k_mass?: number[];
  /** 0 where the token was kept, else how far (nats, before temperature) below the lowest kept logit. */
  edge_gaps?: number[];
  /** The prompt's ids detokenized, special tokens as text. */
  prompt_text?: string;
  /** The completion's ids detokenized as a continuation of the prompt. */
  completion_text?: string;
};

/** How far a verifier's v0.2 fields may be from the reference's. */
export type SampledTolerance = {
  /** Sampled log-probabilities, entropies and edge gaps, nats. */
  nats: number;
  /** entropy_var: within `nats` plus this fraction of the reference's (a variance grows with the entropy's scale). */
  entropyVarRelative: number;
  /** top_k_mass, a probability. */
  topKMass: number;
};

export type VerifyVectors = {
  description: string;
  model: { sha256: string; bytes: number; vocabularySize: number; contextLength: number };
  topK: number;
  /** How far (nats) a verifier's log-probability may be from the reference's. */
  toleranceNats: number;
  /** v0.2 fields: how far a verifier's may be from the reference's (`nats` is `toleranceNats`). */
  sampledTolerance: SampledTolerance;
  cases: VerifyVectorCase[];
};

/** Where the vectors live in the package (the same depth under src/ and dist/). */
export const VERIFY_VECTORS_URL = new URL('../../../vectors/verify/kit-model.json', import.meta.url);

let cached: VerifyVectors | undefined;

/** The kit model's reference verifications, made with node-llama-cpp (the drift test checks them). */
export function verifyVectors(): VerifyVectors {
  cached ??= JSON.parse(readFileSync(VERIFY_VECTORS_URL, 'utf8')) as VerifyVectors;
  return cached;
}

/**
 * What a verifier's answer gets wrong against a reference case, or undefined when it matches: one
 * log-probability per completion token within the tolerance (−1e9, "no weight", only where the
 * reference has it), and the same in_top_k except where the token sits within the tolerance of the
 * top-k edge.
 */
export function verificationMismatch(
  reference: VerifyVectorCase,
  answer: { logprobs: readonly number[]; in_top_k: string },
  toleranceNats: number,
): string | undefined {
  const n = reference.completionTokenIds.length;
  if (answer.logprobs.length !== n) return `${answer.logprobs.length} logprobs for ${n} completion tokens`;
  if (answer.in_top_k.length !== n) return `in_top_k has ${answer.in_top_k.length} flags for ${n} tokens`;
  for (let i = 0; i < n; i++) {
    const got = answer.logprobs[i]!;
    const want = reference.logprobs[i]!;
    if (!(Math.abs(got - want) <= toleranceNats)) {
      return `logprobs[${i}] is ${got}, the kit model gives ${want} (± ${toleranceNats})`;
    }
    const edge = Math.abs(want - reference.kthLogprobs[i]!) <= toleranceNats;
    if (!edge && answer.in_top_k[i] !== reference.in_top_k[i]) {
      return `in_top_k[${i}] is ${answer.in_top_k[i]}, the kit model gives ${reference.in_top_k[i]}`;
    }
  }
  return undefined;
}

/** The v0.2 fields of a verify answer (`VerificationResponse`), as a verifier sends them. */
export type SampledAnswer = {
  sampled_logprobs?: readonly (number | null)[];
  entropy?: readonly number[];
  entropy_var?: readonly number[];
  top_k_mass?: readonly number[];
  edge_gaps?: readonly number[];
  prompt_text?: string;
  completion_text?: string;
};

const SAMPLED_FIELDS = ['sampled_logprobs', 'entropy', 'entropy_var', 'top_k_mass', 'edge_gaps'] as const;

/**
 * What a verifier's v0.2 fields get wrong against a reference case with `sampling`, or undefined
 * when they match (a case without `sampling` expects none). Every field has one entry per
 * completion token; sampled log-probabilities, entropies and edge gaps within `nats`, entropy_var
 * within `nats` plus `entropyVarRelative` of the reference's, top_k_mass within `topKMass`;
 * `sampled_logprobs` null exactly where the reference's is, except at the edge of the kept set
 * (both edge gaps within `nats`: numerics decide which side the token falls). The texts are
 * optional; when sent they are the reference's exactly.
 */
export function sampledMismatch(
  reference: VerifyVectorCase,
  answer: SampledAnswer,
  tolerance: SampledTolerance,
): string | undefined {
  if (!reference.sampling) return undefined;
  const n = reference.completionTokenIds.length;
  for (const field of SAMPLED_FIELDS) {
    const values = answer[field];
    if (!Array.isArray(values)) return `no ${field} for a job with sampling`;
    if (values.length !== n) return `${values.length} ${field} for ${n} completion tokens`;
  }
  const { nats, entropyVarRelative, topKMass } = tolerance;
  const near = (got: number | null | undefined, want: number, within: number) =>
    typeof got === 'number' && Math.abs(got - want) <= within;
  for (let i = 0; i < n; i++) {
    const wantGap = reference.edge_gaps![i]!;
    const gotGap = answer.edge_gaps![i]!;
    if (!near(gotGap, wantGap, nats)) {
      return `edge_gaps[${i}] is ${gotGap}, the kit model gives ${wantGap} (± ${nats})`;
    }
    const want = reference.sampled_logprobs![i]!;
    const got = answer.sampled_logprobs![i]!;
    const onEdge = wantGap <= nats && gotGap <= nats;
    if (want === null || got === null) {
      if (want !== got && !onEdge) {
        return `sampled_logprobs[${i}] is ${got}, the kit model gives ${want} (null: not kept)`;
      }
    } else if (!near(got, want, nats)) {
      return `sampled_logprobs[${i}] is ${got}, the kit model gives ${want} (± ${nats})`;
    }
    const entropy = reference.entropy![i]!;
    if (!near(answer.entropy![i], entropy, nats)) {
      return `entropy[${i}] is ${answer.entropy![i]}, the kit model gives ${entropy} (± ${nats})`;
    }
    const variance = reference.entropy_var![i]!;
    const within = nats + entropyVarRelative * variance;
    if (!near(answer.entropy_var![i], variance, within)) {
      return `entropy_var[${i}] is ${answer.entropy_var![i]}, the kit model gives ${variance} (± ${within.toFixed(4)})`;
    }
    const mass = reference.top_k_mass![i]!;
    if (!near(answer.top_k_mass![i], mass, topKMass)) {
      return `top_k_mass[${i}] is ${answer.top_k_mass![i]}, the kit model gives ${mass} (± ${topKMass})`;
    }
  }
  for (const field of ['prompt_text', 'completion_text'] as const) {
    const got = answer[field];
    if (got !== undefined && reference[field] !== undefined && got !== reference[field]) {
      return `${field} is ${JSON.stringify(got)}, the kit model's tokenizer gives ${JSON.stringify(reference[field])}`;
    }
  }
  return undefined;
}
