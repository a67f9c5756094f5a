/**
 * What a verifier is told about how a completion was sampled: the client's OpenAI fields mapped to
 * the protocol's sampling settings (NODE_PROTOCOL.md §9 "Sampling": temperature 1 and no
 * truncation unless asked), and whether a grammar constrained the output — then the tokens were
 * not drawn from the model's distribution alone and the statistic can't judge them (§9 "Deciding").
 */
import type { Sampling } from '@gpumesh/protocol';

export function samplingOf(request: Record<string, unknown>): Sampling {
  const number = (key: string) => {
    const x = request[key];
    return typeof x === 'number' && Number.isFinite(x) ? x : undefined;
  };
  const clamp = (x: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, x));
  const sampling: Sampling = { temperature: clamp(number('temperature') ?? 1, 0, 2) };
  const topP = number('top_p');
  if (topP !== undefined && topP < 1) sampling.topP = clamp(topP, 0, 1);
  const topK = number('top_k');
  if (topK !== undefined && topK > 0) sampling.topK = Math.floor(topK);
  const minP = number('min_p');
  if (minP !== undefined && minP > 0 && minP < 1) sampling.minP = minP;
  const presence = number('presence_penalty');
  if (presence) sampling.presencePenalty = clamp(presence, -2, 2);
  const frequency = number('frequency_penalty');
  if (frequency) sampling.frequencyPenalty = clamp(frequency, -2, 2);
  const bias = request.logit_bias;
  if (bias && typeof bias === 'object') {
    const entries = Object.entries(bias).filter(
      ([id, b]) => /^[0-9]{1,10}$/.test(id) && typeof b === 'number' && Number.isFinite(b),
    );
    if (entries.length > 0) {
      sampling.logitBias = Object.fromEntries(
        entries.slice(0, 300).map(([id, b]) => [id, clamp(b as number, -100, 100)]),
      );
    }
  }
  return sampling;
}

/**
 * A JSON grammar (response_format), a forced tool call, or — in tool_choice auto (or absent) — a
 * strict tool shaped the output (the node samples prose or calls under a grammar then).
 */
export function isConstrained(request: Record<string, unknown>): boolean {
  const format = (request.response_format as { type?: unknown } | undefined)?.type;
  if (format === 'json_object' || format === 'json_schema') return true;
  const tools = request.tools;
  const choice = request.tool_choice;
  if (!Array.isArray(tools) || tools.length === 0 || choice === 'none') return false;
  if (choice !== undefined && choice !== 'auto') return true;
  return tools.some((t) => (t as { function?: { strict?: unknown } } | null)?.function?.strict === true);
}
