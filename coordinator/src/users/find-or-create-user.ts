import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import type { Database } from '../db/schema.js';

/**
 * The user for a checksummed address, created on first sight. Race-safe: concurrent first
 * sign-ins insert one row (unique address) and both read it back.
 */
export async function findOrCreateUser(
  db: Kysely<Database>,
  clock: Clock,
  address: string,
): Promise<{ id: string; address: string }> {
  await db
    .insertInto('users')
    .values({ id: randomUUID(), address, created_at: clock.now() })
    .onConflict((oc) => oc.column('address').doNothing())
    .execute();
  return db
    .selectFrom('users')
    .select(['id', 'address'])
    .where('address', '=', address)
    .executeTakeFirstOrThrow();
}
