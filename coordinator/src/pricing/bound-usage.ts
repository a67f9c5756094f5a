/**
 * What a node may bill: never more than the coordinator saw. A node reports its own token counts
 * (it holds the tokenizer), and routing sends traffic to the cheapest node, so an unchecked count
 * is a price anyone can raise. Every count is capped by a bound computed from the request and the
 * answer that actually reached the client; a count over its bound is clamped and reported.
 */

/**
 * Completion tokens a choice may have beyond one per byte of output: tokens whose text is empty
 * (end-of-sequence and other control tokens, a stop string the node swallows, the bytes of a
 * character cut off by max_tokens). A tokenizer never makes more tokens than UTF-8 bytes of text
 * otherwise (byte-level BPE and byte-fallback SentencePiece alike).
 */
export const EMPTY_TEXT_TOKENS_PER_CHOICE = 16;

/** The counts a request may bill at most. */
export type UsageBound = { promptTokens: number; completionTokens: number };

/** The counts billed: each the lower of the node's claim and its bound. */
export type BoundedUsage = {
  promptTokens: number;
  completionTokens: number;
  /** Set when the node claimed more than a bound: what it claimed and what the bound was. */
  clamped?: { claimed: UsageBound; bound: UsageBound };
};

/**
 * The completion tokens an answer may bill: at most `maxTokens` (0 = no cap, for kinds without
 * one) and at most one per UTF-8 byte delivered plus EMPTY_TEXT_TOKENS_PER_CHOICE per choice.
 */
export function completionBound({
  maxTokens,
  deliveredBytes,
  choices,
}: {
  maxTokens: number;
  deliveredBytes: number;
  choices: number;
}): number {
  const fromOutput = deliveredBytes + EMPTY_TEXT_TOKENS_PER_CHOICE * Math.max(choices, 1);
  return maxTokens > 0 ? Math.min(maxTokens * Math.max(choices, 1), fromOutput) : fromOutput;
}

/** Clamps a node's claimed counts to their bounds (non-integers and negatives count as 0). */
export function boundUsage(claimed: UsageBound, bound: UsageBound): BoundedUsage {
  const clean = (n: number) => (Number.isSafeInteger(n) && n > 0 ? n : 0);
  const promptTokens = Math.min(clean(claimed.promptTokens), bound.promptTokens);
  const completionTokens = Math.min(clean(claimed.completionTokens), bound.completionTokens);
  const over = claimed.promptTokens > bound.promptTokens || claimed.completionTokens > bound.completionTokens;
  return over
    ? { promptTokens, completionTokens, clamped: { claimed, bound } }
    : { promptTokens, completionTokens };
}

/**
 * UTF-8 bytes of the model's output in an OpenAI response or stream chunk: every string under its
 * choices' `message`, `delta` (content, tool calls, refusal …; not `role`) and `text`, and the
 * numbers of embeddings are not output (embeddings bill prompt tokens only).
 */
export function outputBytes(answer: Record<string, unknown>): number {
  const choices = answer.choices;
  if (!Array.isArray(choices)) return 0;
  let bytes = 0;
  for (const choice of choices as Record<string, unknown>[]) {
    if (!choice || typeof choice !== 'object') continue;
    bytes += stringBytes(choice.text, 0);
    for (const part of [choice.message, choice.delta]) {
      if (!part || typeof part !== 'object') continue;
      for (const [key, value] of Object.entries(part)) if (key !== 'role') bytes += stringBytes(value, 0);
    }
  }
  return bytes;
}

/** Bytes of every string in `value` (node output is parsed JSON of bounded depth). */
function stringBytes(value: unknown, depth: number): number {
  if (typeof value === 'string') return Buffer.byteLength(value, 'utf8');
  if (depth > 32 || !value || typeof value !== 'object') return 0;
  let n = 0;
  for (const v of Array.isArray(value) ? value : Object.values(value)) n += stringBytes(v, depth + 1);
  return n;
}
