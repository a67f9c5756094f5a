/**
 * An answer continued on another node after the node serving its stream failed mid-answer
 * (NODE_PROTOCOL.md §9 "Continuing an answer"): which answers can be, on which nodes, and the job
 * that continues one.
 */
import type { Entry } from './pick-index.js';
import type { Continuation, InferenceJob } from './types.js';

export type { Continuation };

/** Tokens a chat template may add around the continued text (its bound is its UTF-8 bytes plus this). */
const CONTINUED_TEXT_TOKEN_SLACK = 16;

/**
 * Whether an answer cut after its first chunk can be continued: a streamed chat or completion of
 * one choice, plain text (no tools, no JSON response_format: continuing inside a grammar would
 * restart it mid-answer), whose node claimed a weights file (without one, no other node is known
 * to hold the same weights), and of which the client has text.
 */
export function canContinue(job: InferenceJob, entry: Entry, answerText: string | undefined): boolean {
  const request = job.nodeRequest;
  const format = request.response_format as { type?: unknown } | null | undefined;
  return (
    job.stream &&
    (job.kind === 'chat' || job.kind === 'completion') &&
    job.choices === 1 &&
    // A completion continues a string prompt (token ids: the text is appended to a string).
    (job.kind === 'chat' || typeof request.prompt === 'string') &&
    !(Array.isArray(request.tools) && request.tools.length > 0) &&
    !(Array.isArray(request.functions) && request.functions.length > 0) &&
    (format == null || format.type === 'text') &&
    entry.offer.sha256 !== undefined &&
    answerText !== undefined &&
    answerText.length > 0
  );
}

/**
 * Whether a node can take a continuation: it says it continues answers (`continues`, a v0.3
 * offer) for the same weights file, and is held by this replica (peer-RPC does not carry
 * `continueFrom`).
 */
export function canContinueOn(entry: Entry, continuation: Continuation): boolean {
  return (
    entry.offer.continues === true &&
    entry.offer.sha256 === continuation.sha256 &&
    entry.node.via === undefined
  );
}

/**
 * The job that continues `job`'s answer from `text`, of which `completionTokens` were billed: the
 * same request with what is left of `max_tokens`, and the prompt's bound grown by the text (the
 * node reads both; only the first-sign deadline uses it, the client does not pay it twice).
 * Undefined when nothing is left to produce.
 */
export function continuationJob(
  job: InferenceJob,
  continuation: Continuation,
  completionTokens: number,
): InferenceJob | undefined {
  const maxTokens = job.maxTokens - completionTokens;
  if (maxTokens <= 0) return undefined;
  const nodeRequest: Record<string, unknown> = { ...job.nodeRequest, max_tokens: maxTokens };
  if (nodeRequest.max_completion_tokens != null) nodeRequest.max_completion_tokens = maxTokens;
  return {
    ...job,
    nodeRequest,
    maxTokens,
    promptTokensBound:
      job.promptTokensBound +
      Math.max(
        Buffer.byteLength(continuation.text, 'utf8') + CONTINUED_TEXT_TOKEN_SLACK,
        continuation.tokenIds?.length ?? 0,
      ),
    continuation,
  };
}
