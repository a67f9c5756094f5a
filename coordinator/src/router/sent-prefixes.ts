/**
 * The coordinator's own record of the chat prompts it sent each node (issue 44): for each job
 * billed on a node, its prefix keys (@gpumesh/protocol's prefixKeys) with when it was sent, and the
 * prompt tokens billed — exact for its full message list's key, and for a shorter key (a system
 * prompt and tools that new conversations share) the fewest billed for any job that held it, which
 * that prefix cannot exceed. What a node may bill as cached is
 * bounded by this record (pricing/price.ts), and routing prefers the node that holds a request's
 * longest prefix (prefer-prefix.ts): a node's own claims can lower a bill, never raise it.
 *
 * The bound is per account: a job is billed cached tokens only for a prefix its own account sent
 * that node, so no account learns from its bill or its `cached_tokens` that another sent the same
 * prompt (OpenAI and Anthropic do not share prompt caches between organisations either). Routing
 * reads the node's whole record: the node's cache really holds a prefix whoever sent it.
 */
import { DEFAULT_PREFIX_CACHE_LIFETIME_MS } from '../config-schema.js';

/** Keys kept per node at most; the least recently sent go first. */
export const MAX_PREFIX_KEYS_PER_NODE = 4096;
/** Accounts remembered per key at most (a shared system prompt); the least recent go first. */
export const MAX_ACCOUNTS_PER_PREFIX = 64;

type Sent = {
  sentAt: number;
  /**
   * At most the prefix's prompt tokens: for a job's full message list, the tokens billed for it;
   * for a shorter prefix, the fewest billed for a job that held it (the prefix is part of each).
   */
  promptTokens: number;
  /** Whether some job's full message list ended at this key (its count is that prompt's). */
  whole: boolean;
  /** The accounts whose jobs sent it, each with when it last did (oldest first). */
  accounts: Map<string, number>;
};

export class SentPrefixes {
  readonly #lifetimeMs: number;
  readonly #byNode = new Map<string, Map<string, Sent>>();

  constructor(options: { lifetimeMs?: number } = {}) {
    this.#lifetimeMs = options.lifetimeMs ?? DEFAULT_PREFIX_CACHE_LIFETIME_MS;
  }

  /**
   * Notes a chat job of `account` billed on `nodeId`: its prefix keys, the last one with
   * `promptTokens` billed.
   */
  record(nodeId: string, keys: readonly string[], promptTokens: number, now: number, account: string): void {
    if (keys.length === 0) return;
    let sent = this.#byNode.get(nodeId);
    if (!sent) {
      sent = new Map();
      this.#byNode.set(nodeId, sent);
    }
    keys.forEach((key, i) => {
      const full = i === keys.length - 1;
      const before = sent.get(key);
      // A whole job's key keeps its latest count; a shorter prefix only ever lowers its bound.
      const accounts = before?.accounts ?? new Map<string, number>();
      accounts.delete(account);
      accounts.set(account, now);
      if (accounts.size > MAX_ACCOUNTS_PER_PREFIX) accounts.delete(accounts.keys().next().value!);
      const entry: Sent = full
        ? { sentAt: now, promptTokens, whole: true, accounts }
        : before?.whole
          ? { ...before, sentAt: now }
          : {
              sentAt: now,
              promptTokens: Math.min(before?.promptTokens ?? promptTokens, promptTokens),
              whole: false,
              accounts,
            };
      sent.delete(key);
      sent.set(key, entry);
    });
    // Map order is send order: the oldest go first, past the lifetime or the cap.
    for (const [key, entry] of sent) {
      if (sent.size <= MAX_PREFIX_KEYS_PER_NODE && now - entry.sentAt <= this.#lifetimeMs) break;
      sent.delete(key);
    }
  }

  /**
   * The cached tokens a job of `account` with `keys` may bill on `nodeId` at most: for the longest
   * of `keys` that account sent there within the lifetime, the prompt tokens of the earlier job
   * whose whole message list it was, else the fewest of any job that held it (a new conversation's
   * shared system prompt and tools: the node may claim up to that job's own last turn more than
   * the prefix, which only lowers the bill); 0 when none.
   */
  bound(nodeId: string, keys: readonly string[], now: number, account: string): number {
    const sent = this.#byNode.get(nodeId);
    if (!sent) return 0;
    for (let i = keys.length - 1; i >= 0; i--) {
      const entry = sent.get(keys[i]!);
      const sentAt = entry?.accounts.get(account);
      if (sentAt !== undefined && now - sentAt <= this.#lifetimeMs) return entry!.promptTokens;
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
    return this.#longest(nodeId, keys, now)?.index ?? -1;
  }

  /**
   * Whether the longest of `keys` sent to `nodeId` within the lifetime was an earlier job's whole
   * message list: the request continues a conversation that node served (its own history), not
   * only a prefix it shares with others (an agent's system prompt and tools).
   */
  continues(nodeId: string, keys: readonly string[], now: number): boolean {
    return this.#longest(nodeId, keys, now)?.entry.whole ?? false;
  }

  #longest(nodeId: string, keys: readonly string[], now: number): { index: number; entry: Sent } | undefined {
    const sent = this.#byNode.get(nodeId);
    if (!sent) return undefined;
    for (let i = keys.length - 1; i >= 0; i--) {
      const entry = sent.get(keys[i]!);
      if (entry && now - entry.sentAt <= this.#lifetimeMs) return { index: i, entry };
    }
    return undefined;
  }
}
