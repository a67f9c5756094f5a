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
    const messages = (body.messages as Record<string, unknown>[] | undefined) ?? [];
    // Tool definitions, a response schema and tool calls in the history are rendered into the
    // prompt too: the message's whole JSON bounds what it renders to.
    let n = TEMPLATE_TOKENS_PER_REQUEST;
    if (body.tools !== undefined) n += bytes(body.tools);
    if (body.response_format !== undefined) n += bytes(body.response_format);
    for (const m of messages) {
      const plain = m.tool_calls === undefined && typeof m.content === 'string';
      n += (plain ? bytes(m.content) : bytes(m)) + TEMPLATE_TOKENS_PER_MESSAGE;
    }
    return n;
  }
  if (kind === 'completion') {
    // A string, strings, one prompt as token ids, or prompts as token ids: each prompt its bytes
    // (a token id is one token) and what the tokenizer adds.
    const prompt = body.prompt;
    const one = !Array.isArray(prompt) || typeof prompt[0] === 'number';
    const prompts: unknown[] = one ? [prompt] : (prompt as unknown[]);
    const size = (p: unknown) => (Array.isArray(p) ? p.length : bytes(p));
    return prompts.reduce<number>((n, p) => n + size(p) + TEMPLATE_TOKENS_PER_REQUEST, 0);
  }
  // Embeddings: a string, strings, one input as token ids, or inputs as token ids. A string is at
  // most its bytes; a token id is one token.
  const input = body.input;
  const oneTokenized = Array.isArray(input) && input.length > 0 && input.every((x) => typeof x === 'number');
  const inputs: unknown[] =
    typeof input === 'string' || oneTokenized ? [input] : ((input as unknown[]) ?? []);
  const size = (one: unknown) => (Array.isArray(one) ? one.length : bytes(one));
  return inputs.reduce<number>((n, one) => n + size(one) + 2, 0);
}
