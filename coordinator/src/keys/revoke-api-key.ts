import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import type { Database } from '../db/schema.js';
import { ApiError } from '../errors.js';
import type { AcceptedKeys } from './accepted-keys.js';
import { KEY_STATUS } from './key-status.js';

/**
 * Revokes one of the user's keys (active → revoked; repeating it is harmless). A key that does not
 * exist or belongs to someone else is 404 not_found — the answer does not reveal which.
 */
export async function revokeApiKey(
  db: Kysely<Database>,
  clock: Clock,
  params: { userId: string; keyId: string },
  /** The app's accepted keys: the revoked one is forgotten there at once. */
  accepted?: AcceptedKeys,
): Promise<{ id: string; status: typeof KEY_STATUS.revoked }> {
  await db
    .updateTable('api_keys')
    .set({ status: KEY_STATUS.revoked, revoked_at: clock.now() })
    .where('id', '=', params.keyId)
    .where('user_id', '=', params.userId)
    .where('status', '=', KEY_STATUS.active)
    .execute();
  accepted?.forget(params.keyId);
  const row = await db
    .selectFrom('api_keys')
    .select('status')
    .where('id', '=', params.keyId)
    .where('user_id', '=', params.userId)
    .executeTakeFirst();
  if (!row) throw new ApiError('not_found', 'No such key.', { param: 'id' });
  return { id: params.keyId, status: KEY_STATUS.revoked };
}
