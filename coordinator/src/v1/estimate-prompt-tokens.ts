import type { JobKind } from '@gpumesh/protocol';

/** Tokens a chat template may add around each message (role headers, separators). */
export const TEMPLATE_TOKENS_PER_MESSAGE = 16;
/** Tokens a template or tokenizer may add once per request (BOS, assistant header). */
export const TEMPLATE_TOKENS_PER_REQUEST = 32;

/**
 * An upper bound of a request's prompt tokens, for the worst-case reservation: a tokenizer never
 * makes more tokens than UTF-8 bytes (byte-level BPE and byte-fallback SentencePiece alike), plus
 * what templates add. The real count comes from the node and is what gets billed.
 */
export function estimatePromptTokens(kind: JobKind, body: Record<string, unknown>): number {
  const bytes = (v: unknown) =>
    Buffer.byteLength(typeof v === 'string' ? v : JSON.stringify(v ?? ''), 'utf8');
  if (kind === 'chat') {
    const messages = (body.messages as { content?: unknown }[] | undefined) ?? [];
    let n = TEMPLATE_TOKENS_PER_REQUEST;
    for (const m of messages) n += bytes(m.content) + TEMPLATE_TOKENS_PER_MESSAGE;
    return n;
  }
  if (kind === 'completion') return bytes(body.prompt) + TEMPLATE_TOKENS_PER_REQUEST;
  const input = body.input;
  const inputs = Array.isArray(input) ? input : [input];
  return inputs.reduce<number>((n, s) => n + bytes(s) + 2, 0);
}
