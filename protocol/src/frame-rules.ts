import type { FrameType } from './messages.js';

type JsonRecord = Record<string, unknown>;
const isRecord = (value: unknown): value is JsonRecord => typeof value === 'object' && value !== null;

/**
 * The first break of a rule that ties two fields of a schema-valid frame (which JSON Schema cannot
 * say), as `path: message`, or undefined (NODE_PROTOCOL.md §2 "Checks", v0.5):
 * - a model offer's `price.cachedInputPerMTok` is at most its `inputPerMTok`;
 * - a usage's `prompt_tokens_details.cached_tokens` is at most its `prompt_tokens`.
 */
export function frameRuleViolation(type: FrameType, frame: JsonRecord): string | undefined {
  if (type === 'manifest') {
    const models = (frame.manifest as { models: { price: JsonRecord }[] }).models;
    for (const [i, { price }] of models.entries()) {
      const cached = price.cachedInputPerMTok;
      if (typeof cached === 'string' && BigInt(cached) > BigInt(price.inputPerMTok as string)) {
        return `/manifest/models/${i}/price/cachedInputPerMTok: must be at most inputPerMTok`;
      }
    }
  }
  if (type === 'result') return usageViolation('/response/usage', (frame.response as JsonRecord).usage);
  if (type === 'error') return usageViolation('/usage', frame.usage);
  return undefined;
}

function usageViolation(path: string, usage: unknown): string | undefined {
  if (!isRecord(usage) || !isRecord(usage.prompt_tokens_details)) return undefined;
  const cached = usage.prompt_tokens_details.cached_tokens;
  if (typeof cached === 'number' && cached > (usage.prompt_tokens as number)) {
    return `${path}/prompt_tokens_details/cached_tokens: must be at most prompt_tokens`;
  }
  return undefined;
}
