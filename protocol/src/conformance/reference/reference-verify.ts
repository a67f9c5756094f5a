import { Value } from '@sinclair/typebox/value';
import type { ProtocolErrorCode } from '../../errors.js';
import { KIT_MODEL_SHA256 } from '../../kit-model/kit-model.js';
import type { Manifest, ModelOffer } from '../../manifest.js';
import { type VerificationResponse, VerifyRequest } from '../../messages.js';
import { type VerifyVectorCase, verifyVectors } from '../node/verify-vectors.js';
import { usageOf } from './fake-inference.js';

/** The id the reference node serves the kit model under. */
export const REFERENCE_KIT_MODEL = 'gpumesh-kit';

/** The reference node's offer of the kit model, as a verifier (text family, scope verify). */
export function referenceKitOffer(): ModelOffer {
  return {
    id: REFERENCE_KIT_MODEL,
    family: 'text',
    contextLength: verifyVectors().model.contextLength,
    maxConcurrency: 2,
    sha256: KIT_MODEL_SHA256,
    price: { currency: 'USD', inputPerMTok: '10000000', outputPerMTok: '10000000' },
  };
}

/** A manifest with the kit model and the verify scope added. */
export function withKitModel(manifest: Manifest): Manifest {
  return {
    ...manifest,
    models: [...manifest.models, referenceKitOffer()],
    scopes: [...manifest.scopes, 'infer.text', 'verify'],
  };
}

export type ReferenceVerification =
  | { response: VerificationResponse }
  | { error: ProtocolErrorCode; message: string };

/**
 * The reference node's verify job, in the order a real verifier checks: the request's shape, the
 * weights (`sha256`), the token ids against the vocabulary, the length against the context. It holds
 * no weights, so it scores only the kit's reference cases (from the vectors, under a case's own
 * sampling settings) and says so for any other completion. `breaks` skips exactly one scenario's
 * rule, or breaks the v0.2 fields (`verify_sampling`).
 */
export function referenceVerify(offer: ModelOffer, request: unknown, breaks?: string): ReferenceVerification {
  if (!Value.Check(VerifyRequest, request)) {
    return { error: 'invalid_request', message: 'verify: promptTokenIds, completionTokenIds, topK' };
  }
  if (request.sha256 && request.sha256 !== offer.sha256 && breaks !== 'verify_unknown_model') {
    return { error: 'model_not_found', message: `verify: ${offer.id} is not the weights ${request.sha256}` };
  }
  const vectors = verifyVectors();
  const tokens = [...request.promptTokenIds, ...request.completionTokenIds];
  if (tokens.some((t) => t >= vectors.model.vocabularySize) && breaks !== 'verify_bad_tokens') {
    return { error: 'invalid_request', message: 'verify: a token id is outside the vocabulary' };
  }
  if (tokens.length > offer.contextLength) {
    return { error: 'context_length_exceeded', message: `verify: ${tokens.length} tokens` };
  }
  const same = (a: readonly number[], b: readonly number[]) =>
    a.length === b.length && a.every((x, i) => x === b[i]);
  const reference = vectors.cases.find(
    (c) =>
      offer.sha256 === KIT_MODEL_SHA256 &&
      request.topK === vectors.topK &&
      same(c.promptTokenIds, request.promptTokenIds) &&
      same(c.completionTokenIds, request.completionTokenIds) &&
      // Sampled fields only for the settings the case was scored under.
      (request.sampling === undefined || Value.Equal(c.sampling, request.sampling)),
  );
  if (!reference) {
    return {
      error: 'runtime_error',
      message: 'the reference node holds no weights: it scores only the kit’s reference cases',
    };
  }
  // Broken on purpose (verify): each token scored by the distribution one position late.
  const logprobs = breaks === 'verify' ? [...reference.logprobs.slice(1), 0] : reference.logprobs;
  return {
    response: {
      object: 'verification',
      model: offer.id,
      logprobs,
      in_top_k: reference.in_top_k,
      ...(request.sampling ? sampledFields(reference, breaks) : {}),
      usage: usageOf(tokens.length, 0),
    },
  };
}

/**
 * A case's v0.2 fields (NODE_PROTOCOL.md §9 "Sampling"). Broken on purpose (`verify_sampling`, a
 * node that ignores the job's settings): each kept token's log-probability is the raw one, at
 * temperature 1 with nothing truncated, instead of the processed distribution's.
 */
function sampledFields(reference: VerifyVectorCase, breaks?: string): Partial<VerificationResponse> {
  const sampled = reference.sampled_logprobs!;
  return {
    sampled_logprobs:
      breaks === 'verify_sampling'
        ? sampled.map((x, i) => (x === null ? null : reference.logprobs[i]!))
        : sampled,
    entropy: reference.entropy!,
    entropy_var: reference.entropy_var!,
    top_k_mass: reference.top_k_mass!,
    edge_gaps: reference.edge_gaps!,
    ...(reference.prompt_text !== undefined ? { prompt_text: reference.prompt_text } : {}),
    ...(reference.completion_text !== undefined ? { completion_text: reference.completion_text } : {}),
  };
}
