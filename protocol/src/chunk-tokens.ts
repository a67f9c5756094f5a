type Choice = { delta?: { content?: unknown }; text?: unknown } | null | undefined;

/**
 * The completion tokens a streamed chunk carries (NODE_PROTOCOL.md §9): its `tokens` when the node
 * counted them (a chunk may hold several), else one per choice with non-empty text (`delta.content`
 * or `text`), as nodes sent them before `tokens` existed: one token a chunk, none in an empty delta.
 * What the node reports in a cut job's usage and what the coordinator bills a cut stream by.
 */
export function chunkTokens(chunk: Readonly<Record<string, unknown>>, tokens?: number): number {
  if (tokens !== undefined) return tokens;
  const choices = chunk.choices;
  if (!Array.isArray(choices)) return 0;
  let n = 0;
  for (const choice of choices as Choice[]) {
    const piece = choice?.delta?.content ?? choice?.text;
    if (typeof piece === 'string' && piece.length > 0) n++;
  }
  return n;
}
