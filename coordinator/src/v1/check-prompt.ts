/**
 * A completion's `prompt` in one of OpenAI's four forms, refused with a message saying which rule it
 * broke (the schema's union would report its first branch's error, "prompt: must be string").
 */
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../errors.js';
import { MAX_INPUT_TOKENS, MAX_PROMPTS } from './schemas.js';

const FORMS = `a string, 1–${MAX_PROMPTS} strings, token ids, or 1–${MAX_PROMPTS} non-empty lists of token ids`;

export async function checkPrompt(request: FastifyRequest): Promise<void> {
  const prompt = (request.body as { prompt?: unknown } | null)?.prompt;
  if (prompt === undefined || typeof prompt === 'string') return; // the schema's own errors
  const refuse = (why: string) => {
    throw new ApiError('invalid_request', `prompt ${why}; it must be ${FORMS}.`, { param: 'prompt' });
  };
  if (!Array.isArray(prompt)) return refuse('is neither a string nor an array');
  if (prompt.length === 0) return refuse('is empty');
  const ids = (list: unknown[]) => list.every((id) => Number.isInteger(id) && (id as number) >= 0);
  if (typeof prompt[0] === 'number') {
    if (!ids(prompt))
      return refuse('mixes token ids with other values, or holds a negative or fractional id');
    if (prompt.length > MAX_INPUT_TOKENS)
      return refuse(`holds ${prompt.length} token ids (at most ${MAX_INPUT_TOKENS})`);
    return;
  }
  if (prompt.length > MAX_PROMPTS) return refuse(`holds ${prompt.length} prompts (at most ${MAX_PROMPTS})`);
  if (prompt.every((p) => typeof p === 'string')) return;
  for (const p of prompt) {
    if (!Array.isArray(p)) return refuse('mixes strings with token-id lists');
    if (p.length === 0 || p.length > MAX_INPUT_TOKENS || !ids(p))
      return refuse(`holds a token-id list that is empty, over ${MAX_INPUT_TOKENS} ids, or not ids`);
  }
}
