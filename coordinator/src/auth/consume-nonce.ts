import type { Kysely } from 'kysely';
import { toMillis } from '../db/bigint.js';
import type { Database } from '../db/schema.js';

/**
 * Takes a nonce out of the store and returns what it was issued for, or null when it does not
 * exist (never issued, or already used). One DELETE … RETURNING, so two concurrent verifies of the
 * same nonce cannot both get it.
 */
export async function consumeNonce(
  db: Kysely<Database>,
  nonce: string,
): Promise<{ address: string; message: string; expiresAtMs: number } | null> {
  const row = await db
    .deleteFrom('auth_nonces')
    .where('nonce', '=', nonce)
    .returning(['address', 'message', 'expires_at'])
    .executeTakeFirst();
  return row ? { address: row.address, message: row.message, expiresAtMs: toMillis(row.expires_at) } : null;
}
