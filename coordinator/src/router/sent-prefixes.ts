/**
 * The coordinator's own record of the chat prompts it sent each node (issue 44): for each job
 * billed on a node, its prefix keys (@gpumesh/protocol's prefixKeys) with when it was sent, and for its
 * full message list's key the prompt tokens it was billed. What a node may bill as cached is
 * bounded by this record (pricing/price.ts), and routing prefers the node that holds a request's
 * longest prefix (prefer-prefix.ts): a node's own claims can lower a bill, never raise it.
 */
import { DEFAULT_PREFIX_CACHE_LIFETIME_MS } from '../config-schema.js';

/** Keys kept per node at most; the least recently sent go first. */
export const MAX_PREFIX_KEYS_PER_NODE = 4096;

type Sent = {
  sentAt: number;
  /** Set for a job's full message list: the prompt tokens billed for it. */
  promptTokens: number | undefined;
};

export class SentPrefixes {
  readonly #lifetimeMs: number;
  readonly #byNode = new Map<string, Map<string, Sent>>();

  constructor(options: { lifetimeMs?: number } = {}) {
    this.#lifetimeMs = options.lifetimeMs ?? DEFAULT_PREFIX_CACHE_LIFETIME_MS;
  }

  /** Notes a chat job billed on `nodeId`: its prefix keys, the last one with `promptTokens` billed. */
  record(nodeId: string, keys: readonly string[], promptTokens: number, now: number): void {
    if (keys.length === 0) return;
    let sent = this.#byNode.get(nodeId);
    if (!sent) {
      sent = new Map();
      this.#byNode.set(nodeId, sent);
    }
    keys.forEach((key, i) => {
      const full = i === keys.length - 1;
      const before = sent.get(key);
      // A key sent again stays the full list of the job that had it, with the latest count.
      const tokens = full ? promptTokens : before?.promptTokens;
      sent.delete(key);
      sent.set(key, { sentAt: now, promptTokens: tokens });
    });
    // Map order is send order: the oldest go first, past the lifetime or the cap.
    for (const [key, entry] of sent) {
      if (sent.size <= MAX_PREFIX_KEYS_PER_NODE && now - entry.sentAt <= this.#lifetimeMs) break;
      sent.delete(key);
    }
  }

  /**
   * The cached tokens a job with `keys` may bill on `nodeId` at most: the prompt tokens billed for
   * the longest earlier job sent there within the lifetime whose full message list's key is one of
   * `keys`; 0 when none.
   */
  bound(nodeId: string, keys: readonly string[], now: number): number {
    const sent = this.#byNode.get(nodeId);
    if (!sent) return 0;
    for (let i = keys.length - 1; i >= 0; i--) {
      const entry = sent.get(keys[i]!);
      if (entry?.promptTokens !== undefined && now - entry.sentAt <= this.#lifetimeMs)
        return entry.promptTokens;
    }
    return 0;
  }

  /**
   * Forgets what was sent to `nodeId`: its session ended, and a node that connects again may hold
   * none of it (a restarted daemon's cache is empty), so no cached token is billed against it.
   */
  forget(nodeId: string): void {
    this.#byNode.delete(nodeId);
  }

  /** The index in `keys` of the longest prefix sent to `nodeId` within the lifetime; -1 when none. */
  held(nodeId: string, keys: readonly string[], now: number): number {
    const sent = this.#byNode.get(nodeId);
    if (!sent) return -1;
    for (let i = keys.length - 1; i >= 0; i--) {
      const entry = sent.get(keys[i]!);
      if (entry && now - entry.sentAt <= this.#lifetimeMs) return i;
    }
    return -1;
  }
}
