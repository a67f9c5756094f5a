import { NodeError } from '../errors.js';
import {
  chatChunk,
  chatResponse,
  completionChunk,
  completionResponse,
  embeddingResponse,
  responseId,
  usageOf,
} from './openai-shapes.js';
import type { JobResponse, Runtime, RuntimeJob, ServedModel } from './runtime.js';

export type FixedReplyRuntimeOptions = {
  models: ServedModel[];
  /** The reply, streamed one word per chunk. */
  reply?: string;
  /** The reply as its tokens (one chunk each when streamed); wins over `reply`. */
  replyTokens?: readonly string[];
  /** prompt_tokens reported for every job (default: the request's JSON words). */
  promptTokens?: number;
  /** Fails every job before its first token with a retryable runtime error (tests). */
  failBeforeFirstToken?: boolean;
  /** Waits this long before each streamed chunk, so a client can leave mid-stream (tests). */
  chunkDelayMs?: number;
  /** Waits this long per token of a non-streamed job, so a client can leave before its answer (tests). */
  quietDelayMs?: number;
};

export const DEFAULT_FIXED_REPLY = 'ok';
const EMBEDDING_WIDTH = 8;

/**
 * A runtime that answers every job at once with a fixed reply: for benchmarks of the daemon's own
 * overhead and tests of the protocol client. Usage counts words, not tokens, so it is never offered
 * by configuration; only bench/ and tests construct it.
 */
export function createFixedReplyRuntime(options: FixedReplyRuntimeOptions): Runtime {
  const words = options.replyTokens
    ? [...options.replyTokens]
    : (options.reply ?? DEFAULT_FIXED_REPLY).split(/(?<= )/);
  const pause = () =>
    options.chunkDelayMs ? new Promise((resolve) => setTimeout(resolve, options.chunkDelayMs)) : undefined;
  /** A non-streamed job takes quietDelayMs per token (none by default), and can be cancelled meanwhile. */
  const generateQuietly = async (signal?: AbortSignal) => {
    if (!options.quietDelayMs) return;
    for (const _ of words) {
      await new Promise((resolve) => setTimeout(resolve, options.quietDelayMs));
      if (signal?.aborted) throw new NodeError('job_cancelled');
    }
  };
  let closed = false;
  return {
    info: { name: 'fixed-reply', version: '0.0.0' },
    async load() {},
    models: () => options.models,
    async run(job: RuntimeJob): Promise<JobResponse> {
      if (!options.models.some((model) => model.id === job.model)) throw new NodeError('model_not_found');
      if (job.signal?.aborted) throw new NodeError('job_cancelled');
      if (options.failBeforeFirstToken)
        throw new NodeError('runtime_error', { detail: 'failing on purpose (test).' });
      const promptWords = options.promptTokens ?? JSON.stringify(job.request).split(/\s+/).length;
      job.onPromptTokens?.(promptWords);
      if (job.kind === 'embedding') {
        const inputs = ([] as unknown[]).concat(job.request.input);
        return embeddingResponse(
          job.model,
          inputs.map(() => Array(EMBEDDING_WIDTH).fill(0.5)),
          promptWords,
        );
      }
      const meta = { id: responseId(job.kind), model: job.model, created: Math.floor(Date.now() / 1000) };
      const usage = usageOf(promptWords, words.length);
      const text = words.join('');
      if (job.kind === 'chat') {
        if (job.stream) {
          job.onChunk?.(chatChunk(meta, { role: 'assistant', content: '' }), 0);
          for (const word of words) {
            await pause();
            if (job.signal?.aborted) throw new NodeError('job_cancelled');
            job.onChunk?.(chatChunk(meta, { content: word }), 1);
          }
          job.onChunk?.(chatChunk(meta, {}, 'stop'), 0);
        } else await generateQuietly(job.signal);
        return chatResponse(meta, [{ text, finishReason: 'stop' }], usage);
      }
      if (job.stream) {
        for (const word of words) {
          await pause();
          if (job.signal?.aborted) throw new NodeError('job_cancelled');
          job.onChunk?.(completionChunk(meta, word), 1);
        }
      } else await generateQuietly(job.signal);
      return completionResponse(meta, [{ text, finishReason: 'stop' }], usage);
    },
    alive: () => !closed,
    async close() {
      closed = true;
    },
  };
}
