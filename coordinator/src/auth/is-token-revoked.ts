import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

/** True when the token with this jti was logged out. */
export async function isTokenRevoked(db: Kysely<Database>, jti: string): Promise<boolean> {
  const row = await db.selectFrom('revoked_tokens').select('jti').where('jti', '=', jti).executeTakeFirst();
  return row !== undefined;
}
