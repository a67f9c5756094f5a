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
};

export const DEFAULT_FIXED_REPLY = 'ok';
const EMBEDDING_WIDTH = 8;

/**
 * A runtime that answers every job at once with a fixed reply: for benchmarks of the daemon's own
 * overhead and tests of the protocol client. Usage counts words, not tokens, so it is never offered
 * by configuration; only bench/ and tests construct it.
 */
export function createFixedReplyRuntime(options: FixedReplyRuntimeOptions): Runtime {
  const words = (options.reply ?? DEFAULT_FIXED_REPLY).split(/(?<= )/);
  let closed = false;
  return {
    info: { name: 'fixed-reply', version: '0.0.0' },
    async load() {},
    models: () => options.models,
    async run(job: RuntimeJob): Promise<JobResponse> {
      if (!options.models.some((model) => model.id === job.model)) throw new NodeError('model_not_found');
      if (job.signal?.aborted) throw new NodeError('job_cancelled');
      const promptWords = JSON.stringify(job.request).split(/\s+/).length;
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
          for (const word of words) job.onChunk?.(chatChunk(meta, { content: word }), 1);
          job.onChunk?.(chatChunk(meta, {}, 'stop'), 0);
        }
        return chatResponse(meta, text, 'stop', usage);
      }
      if (job.stream) for (const word of words) job.onChunk?.(completionChunk(meta, word), 1);
      return completionResponse(meta, text, 'stop', usage);
    },
    alive: () => !closed,
    async close() {
      closed = true;
    },
  };
}
