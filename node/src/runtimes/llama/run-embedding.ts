import type { Token } from 'node-llama-cpp';
import { NodeError } from '../../errors.js';
import { embeddingResponse, parseRequest } from '../openai-shapes.js';
import type { JobResponse, RuntimeJob } from '../runtime.js';
import type { LoadedModel } from './loaded-model.js';

/**
 * An `embedding` job: each input (a string, or token ids) pooled by the model's embedding context
 * (made on the first job), shortened to `dimensions` when asked; usage counts the input tokens.
 */
export async function runEmbedding(
  entry: LoadedModel,
  job: RuntimeJob,
  threads: number,
): Promise<JobResponse> {
  const { input, dimensions } = parseRequest('embedding', job.request);
  entry.embedding ??= entry.model.createEmbeddingContext({
    contextSize: entry.contextLength,
    threads,
  });
  const context = await entry.embedding;
  const vectors: number[][] = [];
  let promptTokens = 0;
  // One input (a string, or token ids) or many.
  const inputs: (string | number[])[] =
    typeof input === 'string' || typeof input[0] === 'number'
      ? [input as string | number[]]
      : (input as (string | number[])[]);
  const vocabulary =
    entry.model.fileInfo.metadata.tokenizer?.ggml?.tokens?.length ?? Number.POSITIVE_INFINITY;
  for (const one of inputs) {
    if (job.signal?.aborted) throw new NodeError('job_cancelled');
    if (typeof one !== 'string' && one.some((id) => id >= vocabulary)) {
      throw new NodeError('invalid_request', {
        detail: `input holds a token id past the vocabulary (${vocabulary}).`,
      });
    }
    const tokens = typeof one === 'string' ? entry.model.tokenize(one) : (one as Token[]);
    if (tokens.length >= entry.contextLength) {
      throw new NodeError('context_length_exceeded', {
        detail: `An input has ${tokens.length} tokens; the limit is ${entry.contextLength - 1}.`,
      });
    }
    promptTokens += tokens.length;
    const vector = [...(await context.getEmbeddingFor(tokens)).vector];
    if (dimensions !== undefined && dimensions > vector.length) {
      throw new NodeError('invalid_request', {
        detail: `dimensions may be at most ${vector.length} for this model.`,
      });
    }
    vectors.push(dimensions === undefined ? vector : truncated(vector, dimensions));
  }
  return embeddingResponse(job.model, vectors, promptTokens);
}

/** The first `dimensions` components, scaled back to unit length (how OpenAI shortens embeddings). */
function truncated(vector: number[], dimensions: number): number[] {
  const head = vector.slice(0, dimensions);
  const norm = Math.hypot(...head);
  return norm > 0 ? head.map((x) => x / norm) : head;
}
