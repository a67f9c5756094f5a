/**
 * How long an accepted key is trusted without asking the database again. A key revoked in this
 * process is refused at once (revokeApiKey forgets it); one revoked through another replica, within
 * this time. Every /v1 request checks its key, and the hash and the lookup were ~4 % of a paid
 * request's CPU in bench/gateway-load.ts; a hot key now costs one lookup a second.
 */
export const KEY_CACHE_TTL_MS = 1_000;
/** Keys remembered at most; the oldest go first. */
export const KEY_CACHE_SIZE = 10_000;

/** An active key and its owner. */
export type AcceptedKey = {
  keyId: string;
  userId: string;
  /** The key's credit limit, nanousd; null when it has none. */
  limitNano: bigint | null;
};

/**
 * The API keys one coordinator accepted lately, by their hash (the secret itself is never kept),
 * each trusted for KEY_CACHE_TTL_MS. One per app, built in buildApp and held by its context.
 */
export class AcceptedKeys {
  readonly #keys = new Map<string, AcceptedKey & { until: number }>();

  /** The key accepted under `hash` and still trusted at `now`, if any. */
  get(hash: string, now: number): AcceptedKey | undefined {
    const known = this.#keys.get(hash);
    return known && known.until > now
      ? { keyId: known.keyId, userId: known.userId, limitNano: known.limitNano }
      : undefined;
  }

  /** Trusts `key` under `hash` until now + KEY_CACHE_TTL_MS. */
  remember(hash: string, key: AcceptedKey, now: number): void {
    this.#keys.delete(hash);
    if (this.#keys.size >= KEY_CACHE_SIZE) this.#keys.delete(this.#keys.keys().next().value!);
    this.#keys.set(hash, { ...key, until: now + KEY_CACHE_TTL_MS });
  }

  /** Forgets the key `keyId` (revoked): its next use asks the database. */
  forget(keyId: string): void {
    for (const [hash, key] of this.#keys) if (key.keyId === keyId) this.#keys.delete(hash);
  }
}
