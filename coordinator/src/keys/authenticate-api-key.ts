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
 * The active key behind an `sk-` secret, or null (malformed, unknown or revoked). Looks up by
 * hash only; the secret is never stored or compared in clear.
 */
export async function authenticateApiKey(
  db: Kysely<Database>,
  secret: string,
  clock: Clock = systemClock,
): Promise<{ keyId: string; userId: string } | null> {
  if (!API_KEY_PATTERN.test(secret)) return null;
  const row = await findActiveKey.first(db, [hashApiKey(secret)]);
  if (!row) return null;
  const now = clock.now();
  if (row.last_used_at === null || now - toMillis(row.last_used_at) >= LAST_USED_RESOLUTION_MS) {
    await touchKey.all(db, [now, row.id]);
  }
  return { keyId: row.id, userId: row.user_id };
}
