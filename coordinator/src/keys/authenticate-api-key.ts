import type { Kysely } from 'kysely';
import { type Clock, systemClock } from '../clock.js';
import { toMillis } from '../db/bigint.js';
import type { Database } from '../db/schema.js';
import { Statement } from '../db/statement.js';
import { API_KEY_PATTERN, hashApiKey } from './generate-api-key.js';
import { KEY_STATUS } from './key-status.js';

/** lastUsedAt is refreshed at most this often per key, so hot keys do not write on every call. */
export const LAST_USED_RESOLUTION_MS = 60_000;

// Every /v1 request runs this lookup: a plain statement, no query building.
const findActiveKey = new Statement<{
  id: string;
  user_id: string;
  last_used_at: string | number | bigint | null;
}>(
  `select id, user_id, last_used_at from api_keys where secret_hash = ? and status = '${KEY_STATUS.active}'`,
);
const touchKey = new Statement('update api_keys set last_used_at = ? where id = ?');

/**
 * How long an accepted key is trusted without asking the database again. A key revoked in this
 * process is refused at once (revokeApiKey forgets it); one revoked through another replica, within
 * this time. Every /v1 request checks its key, and the hash and the lookup were ~4 % of a paid
 * request's CPU in bench/gateway-load.ts; a hot key now costs one lookup a second.
 */
export const KEY_CACHE_TTL_MS = 1_000;
/** Keys remembered at most; the oldest go first. */
const KEY_CACHE_SIZE = 10_000;

type Accepted = { keyId: string; userId: string; until: number };
/** Per database: the keys accepted lately, by their hash (the secret itself is never kept). */
const accepted = new WeakMap<Kysely<Database>, Map<string, Accepted>>();

/**
 * The active key behind an `sk-` secret, or null (malformed, unknown or revoked). Looks up by
 * hash only; the secret is never stored or compared in clear.
 */
export async function authenticateApiKey(
  db: Kysely<Database>,
  secret: string,
  clock: Clock = systemClock,
): Promise<{ keyId: string; userId: string } | null> {
  if (!API_KEY_PATTERN.test(secret)) return null;
  const hash = hashApiKey(secret);
  const now = clock.now();
  let keys = accepted.get(db);
  const known = keys?.get(hash);
  if (known && known.until > now) return { keyId: known.keyId, userId: known.userId };
  const row = await findActiveKey.first(db, [hash]);
  if (!row) return null;
  if (row.last_used_at === null || now - toMillis(row.last_used_at) >= LAST_USED_RESOLUTION_MS) {
    await touchKey.all(db, [now, row.id]);
  }
  if (!keys) {
    keys = new Map();
    accepted.set(db, keys);
  }
  keys.delete(hash);
  if (keys.size >= KEY_CACHE_SIZE) keys.delete(keys.keys().next().value!);
  keys.set(hash, { keyId: row.id, userId: row.user_id, until: now + KEY_CACHE_TTL_MS });
  return { keyId: row.id, userId: row.user_id };
}

/** Forgets the accepted key `keyId` (revoked): its next use asks the database. */
export function forgetApiKey(db: Kysely<Database>, keyId: string): void {
  const keys = accepted.get(db);
  if (!keys) return;
  for (const [hash, key] of keys) if (key.keyId === keyId) keys.delete(hash);
}
