/**
 * The text a client got for choice 0 of a chat or completion answer — from the whole response, or
 * from the stream's chunks — which the node's token ids must detokenize to (trust/checks/judge.ts).
 * Undefined when the answer was not text (a tool call).
 */
type Choice = {
  message?: { content?: unknown; tool_calls?: unknown };
  delta?: { content?: unknown; tool_calls?: unknown };
  text?: unknown;
};

function firstChoice(body: Record<string, unknown>): Choice | undefined {
  const choices = body.choices;
  if (!Array.isArray(choices)) return undefined;
  return (choices.find((c) => (c as { index?: unknown }).index === 0) ?? choices[0]) as Choice | undefined;
}

export function deliveredText(response: Record<string, unknown>): string | undefined {
  const choice = firstChoice(response);
  if (!choice) return undefined;
  if (typeof choice.text === 'string') return choice.text;
  if (choice.message?.tool_calls) return undefined;
  const content = choice.message?.content;
  return typeof content === 'string' ? content : content === null ? '' : undefined;
}

export function streamedText(chunks: readonly Record<string, unknown>[]): string | undefined {
  let text = '';
  for (const chunk of chunks) {
    const choice = firstChoice(chunk);
    // A chunk of another choice (n > 1) is not choice 0's text.
    if (!choice || ((choice as { index?: unknown }).index ?? 0) !== 0) continue;
    if (choice.delta?.tool_calls) return undefined;
    const piece = typeof choice.text === 'string' ? choice.text : choice.delta?.content;
    if (typeof piece === 'string') text += piece;
  }
  return text;
}
