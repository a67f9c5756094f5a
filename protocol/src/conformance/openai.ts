import type { Usage } from '../messages.js';
import { check } from './failure.js';

/** Checks for the OpenAI response shapes a node returns (only what the protocol relies on). */

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * usage: integers, total = prompt + completion; `completion` false for embeddings (0). A completion
 * with text (`content`) must count it; one that ended at once (end-of-sequence first, no text)
 * counts 0.
 */
export function checkUsage(usage: Usage, completion: true, content: string): void;
export function checkUsage(usage: Usage, completion: false): void;
export function checkUsage(usage: Usage, completion: boolean, content = ''): void {
  check(
    usage.total_tokens === usage.prompt_tokens + usage.completion_tokens,
    `usage.total_tokens ${usage.total_tokens} ≠ prompt_tokens + completion_tokens`,
  );
  check(usage.prompt_tokens > 0, 'usage.prompt_tokens must count the prompt');
  if (completion)
    check(content === '' || usage.completion_tokens > 0, 'usage.completion_tokens must count the output');
  else check(usage.completion_tokens === 0, 'an embedding has completion_tokens 0');
}

/** A `chat.completion` response; returns its content. */
export function checkChatCompletion(response: Record<string, unknown>): string {
  check(
    response.object === 'chat.completion',
    `response.object is ${String(response.object)}, not chat.completion`,
  );
  const choice = Array.isArray(response.choices) ? response.choices[0] : undefined;
  check(isRecord(choice), 'response.choices[0] is missing');
  check(isRecord(choice.message), 'response.choices[0].message is missing');
  check(typeof choice.message.content === 'string', 'response.choices[0].message.content is not a string');
  check(typeof choice.finish_reason === 'string', 'response.choices[0].finish_reason is not a string');
  return choice.message.content;
}

/** A `chat.completion.chunk`; returns its delta content ('' when none). */
export function checkChatChunk(chunk: Record<string, unknown>): string {
  check(
    chunk.object === 'chat.completion.chunk',
    `chunk.object is ${String(chunk.object)}, not chat.completion.chunk`,
  );
  check(Array.isArray(chunk.choices), 'chunk.choices is not an array');
  const choice = chunk.choices[0];
  if (!isRecord(choice) || !isRecord(choice.delta)) return '';
  return typeof choice.delta.content === 'string' ? choice.delta.content : '';
}

/** An embeddings `list` response with `count` vectors of one dimension. */
export function checkEmbeddings(response: Record<string, unknown>, count: number): void {
  check(response.object === 'list', `response.object is ${String(response.object)}, not list`);
  check(Array.isArray(response.data), 'response.data is not an array');
  check(response.data.length === count, `response.data has ${response.data.length} items, expected ${count}`);
  let dimension: number | undefined;
  response.data.forEach((item: unknown, i: number) => {
    check(isRecord(item) && item.object === 'embedding', `data[${i}].object is not embedding`);
    check(item.index === i, `data[${i}].index is ${String(item.index)}`);
    const vector = item.embedding;
    check(Array.isArray(vector) && vector.length > 0, `data[${i}].embedding is not a non-empty array`);
    check(
      vector.every((x) => typeof x === 'number' && Number.isFinite(x)),
      `data[${i}].embedding holds non-numbers`,
    );
    dimension ??= vector.length;
    check(vector.length === dimension, `data[${i}].embedding has another dimension`);
  });
}
