/**
 * The token ids of an answer continued on another node (NODE_PROTOCOL.md §9 "Continuing an
 * answer", v0.4): those the client got, gathered from the stream's chunks, and the ids of the
 * whole answer a verifier checks, joined from the two nodes'.
 */
import { MAX_VERIFY_TOKENS } from '@gpumesh/protocol';
import type { JobTokenIds } from './jobs.js';

/**
 * `ids` with a chunk's ids added: the chunk carried `tokens` tokens (the count billed) and
 * `chunkIds` should be theirs. Undefined, for good, once a chunk with tokens came without its ids
 * or with another number of them (a v0.3 node, a relay): the answer then continues from its text.
 */
export function withChunkIds(
  ids: number[] | undefined,
  tokens: number,
  chunkIds: readonly number[] | undefined,
): number[] | undefined {
  if (ids === undefined) return undefined;
  if (tokens === 0 && (chunkIds === undefined || chunkIds.length === 0)) return ids;
  if (chunkIds === undefined || chunkIds.length !== tokens) return undefined;
  if (ids.length + chunkIds.length > MAX_VERIFY_TOKENS) return undefined;
  ids.push(...chunkIds);
  return ids;
}

/**
 * The ids of a continued answer as one node's would be, for the verifier: the continuing node
 * reports the prompt it evaluated as the fresh answer's prompt followed by the `delivered` ids it
 * was given, and its new tokens; joined, the prompt is its prompt without those ids and the
 * completion is the delivered ids followed by the new ones. Undefined when its prompt does not end
 * with the delivered ids (it did not evaluate what it was given: the check fails for want of ids).
 */
export function joinContinuedIds(
  delivered: readonly number[],
  continuing: JobTokenIds | undefined,
): JobTokenIds | undefined {
  if (!continuing) return undefined;
  const cut = continuing.prompt.length - delivered.length;
  if (cut <= 0 || delivered.some((id, i) => continuing.prompt[cut + i] !== id)) return undefined;
  return {
    prompt: continuing.prompt.slice(0, cut),
    completion: [...delivered, ...continuing.completion],
  };
}
