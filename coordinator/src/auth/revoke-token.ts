import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import type { Database } from '../db/schema.js';

/**
 * Revokes a session token by its jti until it would have expired anyway; rows past their expiry
 * are swept on the way (they can no longer pass verifyToken).
 */
export async function revokeToken(
  db: Kysely<Database>,
  clock: Clock,
  token: { jti: string; exp: number },
): Promise<void> {
  await db
    .deleteFrom('revoked_tokens')
    .where('expires_at', '<', Math.floor(clock.now() / 1000))
    .execute();
  await db
    .insertInto('revoked_tokens')
    .values({ jti: token.jti, expires_at: token.exp })
    .onConflict((oc) => oc.column('jti').doNothing())
    .execute();
}
