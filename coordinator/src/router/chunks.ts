/**
 * The OpenAI stream chunks the coordinator shapes itself: a whole response sent as one chunk, a
 * node's chunk with its finish cleared, the one finish chunk, and the usage chunk.
 */
import type { JobKind } from '@gpumesh/protocol';
import type { JobUsage } from './jobs.js';

/** The request a stream answers: its chunks carry its id and model, shaped for its kind. */
export type ChunkSource = { readonly requestId: string; readonly model: string; readonly kind: JobKind };

type WholeChoice = {
  index?: number;
  message?: { content?: string | null; tool_calls?: unknown[] };
  text?: string;
  logprobs?: unknown;
};

/**
 * A node's whole response (to a stream request) as one chunk: every choice (n > 1) with its
 * index, its text or content, and a chat choice's tool calls as OpenAI streams them (each with
 * its `index` in the list).
 */
export function responseAsChunk(
  job: ChunkSource,
  response: Record<string, unknown>,
): Record<string, unknown> {
  const given = Array.isArray(response.choices) ? (response.choices as (WholeChoice | null)[]) : [];
  const choices = given.length > 0 ? given : [null];
  const id = job.requestId;
  const created = (response.created as number | undefined) ?? Math.floor(Date.now() / 1000);
  if (job.kind === 'completion') {
    return {
      id,
      object: 'text_completion',
      created,
      model: job.model,
      choices: choices.map((c, i) => ({
        index: c?.index ?? i,
        text: c?.text ?? '',
        logprobs: c?.logprobs ?? null,
        finish_reason: null,
      })),
    };
  }
  return {
    id,
    object: 'chat.completion.chunk',
    created,
    model: job.model,
    choices: choices.map((c, i) => {
      const calls = c?.message?.tool_calls;
      const delta =
        Array.isArray(calls) && calls.length > 0
          ? {
              role: 'assistant',
              content: null,
              tool_calls: calls.map((call, at) => ({ index: at, ...(call as object) })),
            }
          : { role: 'assistant', content: c?.message?.content ?? '' };
      return { index: c?.index ?? i, delta, logprobs: c?.logprobs ?? null, finish_reason: null };
    }),
  };
}

/**
 * A node's chunk as the client gets it: finish reasons cleared (the coordinator sends the one
 * finish chunk); undefined for a chunk that carried nothing else (an empty delta with a finish).
 */
export function withoutFinish(chunk: Record<string, unknown>): Record<string, unknown> | undefined {
  const choices = chunk.choices;
  if (!Array.isArray(choices)) return chunk;
  if (!choices.some((c) => (c as { finish_reason?: unknown })?.finish_reason != null)) return chunk;
  const carries = (c: { delta?: Record<string, unknown>; text?: unknown }) =>
    (typeof c?.text === 'string' && c.text !== '') ||
    (c?.delta !== undefined && Object.values(c.delta).some((v) => v !== undefined && v !== null && v !== ''));
  if (!choices.some((c) => carries(c as { delta?: Record<string, unknown>; text?: unknown })))
    return undefined;
  const { usage: _usage, ...rest } = chunk;
  return { ...rest, choices: choices.map((c) => ({ ...(c as object), finish_reason: null })) };
}

/** The fields every chunk of a stream shares. */
function chunkMeta(job: ChunkSource, response: Record<string, unknown>) {
  return {
    id: job.requestId,
    object: job.kind === 'completion' ? 'text_completion' : 'chat.completion.chunk',
    created: (response.created as number | undefined) ?? Math.floor(Date.now() / 1000),
    model: job.model,
  };
}

/** The stream's finish chunk: each choice's finish reason, once. */
export function finishChunk(job: ChunkSource, response: Record<string, unknown>): Record<string, unknown> {
  const choices = (response.choices as { index?: number; finish_reason?: string }[] | undefined) ?? [{}];
  return {
    ...chunkMeta(job, response),
    choices: choices.map((c, i) => ({
      index: c.index ?? i,
      ...(job.kind === 'completion' ? { text: '' } : { delta: {} }),
      finish_reason: c.finish_reason ?? 'stop',
    })),
  };
}

/** The usage chunk OpenAI sends last when stream_options.include_usage is set: no choices, usage with its cost. */
export function usageChunk(
  job: ChunkSource,
  response: Record<string, unknown>,
  usage: JobUsage & { cost: number },
): Record<string, unknown> {
  return { ...chunkMeta(job, response), choices: [], usage };
}
