import { type Kysely, sql } from 'kysely';
import { isPostgres } from './dialect.js';
import type { Database } from './schema.js';

/**
 * Inside a transaction: waits for, then holds until the transaction ends, the lock named `key` —
 * for work that must not interleave with itself across replicas when no single row can be locked
 * (the row may not exist yet). PostgreSQL: a transaction-scoped advisory lock on the key's hash (two
 * keys may share a lock; they then merely wait for each other). SQLite serializes writers, so
 * nothing is needed there: a transaction that writes first holds the database until it ends.
 */
export async function lockInTransaction(trx: Kysely<Database>, key: string): Promise<void> {
  if (isPostgres(trx)) await sql`select pg_advisory_xact_lock(hashtext(${key}))`.execute(trx);
}
