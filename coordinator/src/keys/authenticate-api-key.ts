import type { Kysely } from 'kysely';
import { type Clock, systemClock } from '../clock.js';
import { toBigIntOrNull, toMillis } from '../db/bigint.js';
import type { Database } from '../db/schema.js';
import { Statement } from '../db/statement.js';
import type { AcceptedKey, AcceptedKeys } from './accepted-keys.js';
import { API_KEY_PATTERN, hashApiKey } from './generate-api-key.js';
import { KEY_STATUS } from './key-status.js';

export { KEY_CACHE_TTL_MS } from './accepted-keys.js';

/** lastUsedAt is refreshed at most this often per key, so hot keys do not write on every call. */
export const LAST_USED_RESOLUTION_MS = 60_000;

// Every /v1 request runs this lookup: a plain statement, no query building.
const findActiveKey = new Statement<{
  id: string;
  user_id: string;
  last_used_at: string | number | bigint | null;
  limit_nano: string | number | bigint | null;
}>(
  `select id, user_id, last_used_at, limit_nano from api_keys where secret_hash = ? and status = '${KEY_STATUS.active}'`,
);
const touchKey = new Statement('update api_keys set last_used_at = ? where id = ?');

/**
 * The active key behind an `sk-` secret, or null (malformed, unknown or revoked). Looks up by
 * hash only; the secret is never stored or compared in clear. With `accepted` (the app's), a key
 * accepted within KEY_CACHE_TTL_MS is trusted without a lookup.
 */
export async function authenticateApiKey(
  db: Kysely<Database>,
  secret: string,
  { accepted, clock = systemClock }: { accepted?: AcceptedKeys; clock?: Clock } = {},
): Promise<AcceptedKey | null> {
  if (!API_KEY_PATTERN.test(secret)) return null;
  const hash = hashApiKey(secret);
  const now = clock.now();
  const known = accepted?.get(hash, now);
  if (known) return known;
  const row = await findActiveKey.first(db, [hash]);
  if (!row) return null;
  if (row.last_used_at === null || now - toMillis(row.last_used_at) >= LAST_USED_RESOLUTION_MS) {
    await touchKey.all(db, [now, row.id]);
  }
  const key = { keyId: row.id, userId: row.user_id, limitNano: toBigIntOrNull(row.limit_nano) };
  accepted?.remember(hash, key, now);
  return key;
}
