import { createHash, type Hash } from 'node:crypto';
import { type Static, Type } from '@sinclair/typebox';
import { canonicalJson } from './identity/canonical-json.js';

/** Hex characters of a prefix key: the first 64 bits of a SHA-256. */
export const PREFIX_KEY_HEX_CHARS = 16;
/** The most models one `prefixCache` lists (v0.5, NODE_PROTOCOL.md §9 "Prefix cache"). */
export const MAX_PREFIX_CACHE_MODELS = 8;
/** The most keys one model's entry of `prefixCache` lists. */
export const MAX_PREFIX_CACHE_KEYS = 64;

/**
 * v0.5: the prefix keys a node holds in KV now, per model, most recent first — what `ping` and
 * `presence` may carry (NODE_PROTOCOL.md §9 "Prefix cache"). Bounded: a longer list is a frame error.
 */
export const PrefixCacheSchema = Type.Array(
  Type.Object({
    model: Type.String({ minLength: 1, maxLength: 256 }),
    keys: Type.Array(Type.String({ pattern: `^[0-9a-f]{${PREFIX_KEY_HEX_CHARS}}$` }), {
      maxItems: MAX_PREFIX_CACHE_KEYS,
    }),
  }),
  { maxItems: MAX_PREFIX_CACHE_MODELS },
);
export type PrefixCache = Static<typeof PrefixCacheSchema>;

/**
 * The prefix key of each message boundary of a chat job, in order: key `i` names the prompt that
 * ends after `messages[i]`. It is the first 16 hex digits of
 * `sha256(modelId + "\n" + canonicalJson(tools ?? null) + "\n" + canonicalJson(messages[0..i]))`,
 * so a node and a coordinator that never tokenize agree on it (NODE_PROTOCOL.md §9 "Prefix cache").
 * `modelId` is the job's `model`, `tools` and `messages` its request's.
 * @throws TypeError on values JSON cannot carry (as canonicalJson).
 */
export function prefixKeys(modelId: string, tools: unknown, messages: readonly unknown[]): string[] {
  // canonicalJson(messages[0..i]) is "[" + m0 + "," + … + mi + "]": hash the common part once
  // and finish a copy of the hash per boundary (the last boundary finishes the hash itself), so a
  // long conversation costs one pass.
  const running: Hash = createHash('sha256').update(`${modelId}\n${canonicalJson(tools ?? null)}\n[`);
  const last = messages.length - 1;
  return messages.map((message, i) => {
    running.update(`${i === 0 ? '' : ','}${canonicalJson(message ?? null)}`);
    const finished = i === last ? running : running.copy();
    return finished.update(']').digest('hex').slice(0, PREFIX_KEY_HEX_CHARS);
  });
}
