import { VerifyRequest } from '@gpumesh/protocol';
import { Value } from '@sinclair/typebox/value';
import type { Token } from 'node-llama-cpp';
import { NodeError } from '../../errors.js';
import type { JobResponse, RuntimeJob, ServedModel } from '../runtime.js';
import { type LoadedModel, vocabularySize, withSequence } from './loaded-model.js';
import { verificationResponse } from './verification-response.js';
import { verifyTokens } from './verify-tokens.js';

/**
 * A `verify` job: the given prompt and completion teacher-forced on this model, one batched pass;
 * per completion token its log-probability and whether it was in the top k (a "1"/"0" string).
 * Usage: every token evaluated counts as prompt.
 */
export async function runVerify(
  entry: LoadedModel,
  offer: ServedModel,
  job: RuntimeJob,
): Promise<JobResponse> {
  if (!Value.Check(VerifyRequest, job.request)) {
    throw new NodeError('invalid_request', { detail: 'verify: promptTokenIds, completionTokenIds, topK' });
  }
  const request = job.request as VerifyRequest;
  // Scores from other weights under the same id would convict an honest node: refuse instead.
  if (request.sha256 && request.sha256 !== offer.sha256) {
    throw new NodeError('model_not_found', {
      detail: `verify: ${job.model} is not the weights ${request.sha256}`,
    });
  }
  const vocabulary = vocabularySize(entry.model);
  if ([...request.promptTokenIds, ...request.completionTokenIds].some((t) => t >= vocabulary)) {
    throw new NodeError('invalid_request', {
      detail: `verify: a token id is outside the vocabulary (${vocabulary})`,
    });
  }
  const evaluated = request.promptTokenIds.length + request.completionTokenIds.length;
  if (evaluated > Math.min(entry.contextLength, entry.context?.contextSize ?? 0)) {
    throw new NodeError('context_length_exceeded', { detail: `${evaluated} tokens to verify` });
  }
  job.onPromptTokens?.(evaluated);
  const verified = await withSequence(entry, (sequence) =>
    verifyTokens(sequence, {
      promptTokens: request.promptTokenIds as Token[],
      completionTokens: request.completionTokenIds as Token[],
      topK: request.topK,
      ...(request.sampling ? { sampling: request.sampling } : {}),
    }),
  );
  return verificationResponse({ model: entry.model, modelId: job.model, request, verified });
}
