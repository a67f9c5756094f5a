import type { Kysely } from 'kysely';
import { toMillis } from '../db/bigint.js';
import type { Database } from '../db/schema.js';

export type User = { id: string; address: `0x${string}`; createdAtMs: number };

/** A user by id, or null. */
export async function getUser(db: Kysely<Database>, userId: string): Promise<User | null> {
  const row = await db
    .selectFrom('users')
    .select(['id', 'address', 'created_at'])
    .where('id', '=', userId)
    .executeTakeFirst();
  return row
    ? { id: row.id, address: row.address as `0x${string}`, createdAtMs: toMillis(row.created_at) }
    : null;
}
