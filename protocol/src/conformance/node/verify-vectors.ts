import { readFileSync } from 'node:fs';

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
};

export type VerifyVectors = {
  description: string;
  model: { sha256: string; bytes: number; vocabularySize: number; contextLength: number };
  topK: number;
  /** How far (nats) a verifier's log-probability may be from the reference's. */
  toleranceNats: number;
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
