import { MAX_PREFIX_CACHE_KEYS, type PrefixCache, prefixKeys } from '../../prefix-keys.js';
import { countPromptTokens } from './fake-inference.js';

/** Conversations the reference node remembers. */
const CONVERSATIONS = 4;

/**
 * The reference node's stand-in for a KV cache (NODE_PROTOCOL.md §9 "Prefix cache"): it remembers
 * the prefix keys of the last few chat jobs it served and, as a real node would have them in KV,
 * reports a new job's prompt tokens up to the longest remembered prefix as `cached_tokens` (counted
 * as fake-inference.ts counts prompts). `forgets` (the `prefix_cache` break) remembers each
 * conversation without its last message, so it never advertises the key of the one it just served.
 */
export class ReferencePrefixCache {
  /** Most recent first: each job's model, keys and prompt tokens per message boundary. */
  private held: { model: string; keys: string[]; tokens: number[] }[] = [];

  constructor(private readonly forgets = false) {}

  /** Serves a chat job's prompt: the tokens it holds of it (cached_tokens), and remembers it. */
  serve(model: string, tools: unknown, messages: unknown[], promptTokens: number): number {
    const keys = prefixKeys(model, tools, messages);
    const tokens = messages.map((_, i) => countPromptTokens({ messages: messages.slice(0, i + 1) }));
    let cached = 0;
    for (const conversation of this.held) {
      if (conversation.model !== model) continue;
      for (const [i, key] of keys.entries()) {
        if (conversation.keys.includes(key)) cached = Math.max(cached, tokens[i]!);
      }
    }
    const remembered = this.forgets ? { model, keys: keys.slice(0, -1), tokens } : { model, keys, tokens };
    this.held = [remembered, ...this.held].slice(0, CONVERSATIONS);
    return Math.min(cached, Math.max(0, promptTokens - 1));
  }

  /** What `ping` and `presence` carry: per model, the newest conversation's keys first, longest first. */
  advertised(): PrefixCache {
    const byModel = new Map<string, string[]>();
    for (const { model, keys } of this.held) {
      const list = byModel.get(model) ?? [];
      byModel.set(model, list);
      for (const key of [...keys].reverse()) if (!list.includes(key)) list.push(key);
    }
    return [...byModel].map(([model, keys]) => ({ model, keys: keys.slice(0, MAX_PREFIX_CACHE_KEYS) }));
  }
}
