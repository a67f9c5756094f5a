/**
 * OpenRouter's `middle-out` transform: a prompt over the model's context is made to fit by dropping
 * messages from its middle — the first message (the system prompt, usually) and the last (the
 * question) stay — and, when the two left still do not fit, by cutting the middle out of the
 * longest one's text. LLMs attend least to the middle of a long context, so that is what goes.
 *
 * It runs only when a node refused the prompt as over its context (the node counts the tokens;
 * the coordinator has only a byte bound), so a prompt that fits costs nothing.
 */

/** How many times one request is squeezed and sent again before its 400 stands. */
export const MIDDLE_OUT_ROUNDS = 3;
/** The share of the context the squeezed prompt aims at: the rest is room for the answer. */
const PROMPT_SHARE = 0.75;
/** The text that replaces what was cut out of one message. */
const CUT_MARK = '\n…\n';

export type MiddleOutReport = { messagesRemoved: number; charactersRemoved: number };

type Message = Record<string, unknown> & { role?: unknown; content?: unknown };

/** OpenRouter applies middle-out by default to models of at most this many tokens of context. */
export const MIDDLE_OUT_DEFAULT_CONTEXT = 8192;

/**
 * Whether a request gets middle-out: asked for (`transforms: ["middle-out"]`), or, on OpenRouter's
 * base URL (/api/v1) with no `transforms`, OpenRouter's default for a model of at most 8,192 tokens
 * of context. On /v1 it is never the default: OpenAI answers an over-context prompt 400.
 */
export function wantsMiddleOut(
  body: Record<string, unknown>,
  openRouter: boolean,
  contextLength: number,
): boolean {
  if (Array.isArray(body.transforms)) return body.transforms.includes('middle-out');
  return openRouter && contextLength <= MIDDLE_OUT_DEFAULT_CONTEXT;
}

/**
 * The node's count of the prompt and its context, from its context_length_exceeded message ("The
 * prompt has N tokens; the context holds M."); undefined when it says neither.
 */
export function overflowOf(message: string): { promptTokens: number; contextTokens: number } | undefined {
  const prompt = /(\d+) tokens/.exec(message);
  const context = /context holds (\d+)/.exec(message);
  if (!prompt || !context) return undefined;
  return { promptTokens: Number(prompt[1]), contextTokens: Number(context[1]) };
}

/**
 * `messages` squeezed to about `target` of `promptTokens` tokens (tokens spread over messages by
 * their bytes): middle messages dropped, nearest the middle first, then the middle of the longest
 * remaining text cut. Undefined when nothing is left to take.
 */
export function middleOut(
  messages: readonly Message[],
  overflow: { promptTokens: number; contextTokens: number } | undefined,
): { messages: Message[]; report: MiddleOutReport } | undefined {
  const sizes = messages.map(bytesOf);
  const total = sizes.reduce((a, b) => a + b, 0) || 1;
  // Without the node's counts, halve the prompt each round.
  const keepShare = overflow
    ? Math.min(0.9, (overflow.contextTokens * PROMPT_SHARE) / overflow.promptTokens)
    : 0.5;
  let toRemove = Math.ceil(total * (1 - keepShare));
  const kept = messages.map(() => true);
  let removed = 0;
  // The middle ones, nearest the middle first: the first and the last stay.
  const middle = messages.map((_, i) => i).slice(1, -1);
  const centre = (messages.length - 1) / 2;
  middle.sort((a, b) => Math.abs(a - centre) - Math.abs(b - centre));
  for (const i of middle) {
    if (toRemove <= 0) break;
    kept[i] = false;
    removed++;
    toRemove -= sizes[i]!;
  }
  // A tool result whose call was dropped goes too (a node refuses an answer to no call).
  const calls = new Set<unknown>();
  for (const [i, m] of messages.entries()) {
    if (!kept[i]) continue;
    if (Array.isArray(m.tool_calls)) for (const c of m.tool_calls as { id?: unknown }[]) calls.add(c.id);
    if (m.role === 'tool' && !calls.has(m.tool_call_id)) {
      kept[i] = false;
      removed++;
      toRemove -= sizes[i]!;
    }
  }
  const out = messages.filter((_, i) => kept[i]);
  let charactersRemoved = 0;
  if (toRemove > 0) {
    // Still too long: cut the middle out of the longest text left.
    let longest = -1;
    for (const [i, m] of out.entries())
      if (
        typeof m.content === 'string' &&
        (longest < 0 || m.content.length > (out[longest]!.content as string).length)
      )
        longest = i;
    if (longest >= 0) {
      const text = out[longest]!.content as string;
      const keep = Math.max(
        0,
        text.length - Math.ceil(toRemove * (text.length / Math.max(1, bytesOf(out[longest]!)))),
      );
      if (keep < text.length) {
        const head = text.slice(0, Math.ceil(keep / 2));
        const tail = text.slice(text.length - Math.floor(keep / 2));
        out[longest] = { ...out[longest]!, content: `${head}${CUT_MARK}${tail}` };
        charactersRemoved = text.length - head.length - tail.length;
      }
    }
  }
  if (removed === 0 && charactersRemoved === 0) return undefined;
  return { messages: out, report: { messagesRemoved: removed, charactersRemoved } };
}

/** A message's size in UTF-8 bytes: its text, or its whole JSON (parts, tool calls). */
function bytesOf(m: Message): number {
  return Buffer.byteLength(
    typeof m.content === 'string' && !m.tool_calls ? m.content : JSON.stringify(m),
    'utf8',
  );
}
