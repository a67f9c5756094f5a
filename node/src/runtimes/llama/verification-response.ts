/**
 * A `verify` job's answer (NODE_PROTOCOL.md §9 "Verification") from what `verifyTokens` read:
 * 4 decimals, −1e9 for a token the model gives no weight; with the request's sampling settings the
 * v0.2 fields and the detokenized prompt and completion. One shape for the daemon's answer and the
 * conformance kit's reference vectors (kit-vectors.test.ts), so the vectors are what a node sends.
 */
import type { VerificationResponse, VerifyRequest } from '@gpumesh/protocol';
import type { LlamaModel, Token } from 'node-llama-cpp';
import { usageOf } from '../openai-shapes.js';
import type { VerifiedTokens } from './verify-tokens.js';

/** The most an edge gap says on the wire: a banned token's (−∞ logit) gap is infinite. */
const MAX_EDGE_GAP_NATS = 1e9;

export type VerificationResponseInput = {
  /** The model that scored the completion (its tokenizer detokenizes the texts). */
  model: LlamaModel;
  /** The node's id of that model (`job.model`). */
  modelId: string;
  request: VerifyRequest;
  verified: VerifiedTokens;
};

export function verificationResponse(input: VerificationResponseInput): VerificationResponse {
  const { model, modelId, request, verified } = input;
  const sampled = verified.sampled;
  const prompt = request.promptTokenIds as Token[];
  const evaluated = request.promptTokenIds.length + request.completionTokenIds.length;
  return {
    object: 'verification',
    model: modelId,
    logprobs: verified.logprobs.map((x) => (Number.isFinite(x) ? round4(x) : -1e9)),
    in_top_k: verified.inTopK.map((x) => (x ? '1' : '0')).join(''),
    ...(sampled
      ? {
          sampled_logprobs: sampled.map((p) => (p.sampledLogprob === null ? null : round4(p.sampledLogprob))),
          entropy: sampled.map((p) => round4(p.entropy)),
          entropy_var: sampled.map((p) => round4(p.entropyVar)),
          top_k_mass: sampled.map((p) => round4(p.topKMass)),
          edge_gaps: sampled.map((p) => round4(Math.min(p.edgeGap, MAX_EDGE_GAP_NATS))),
          // Special tokens as text: the prompt's template shows (BOS, turn markers).
          prompt_text: model.detokenize(prompt, true),
          // As a continuation of the prompt: the tokenizer's leading-space rule sees what came before.
          completion_text: model.detokenize(request.completionTokenIds as Token[], false, prompt),
        }
      : {}),
    usage: usageOf(evaluated, 0),
  };
}

/** 4 decimals, as the protocol's verification fields travel (and −0 as 0). */
function round4(x: number): number {
  return Math.round(x * 10_000) / 10_000 + 0;
}
