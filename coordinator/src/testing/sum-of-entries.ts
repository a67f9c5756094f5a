import { type Kysely, sql } from 'kysely';
import { toBigInt } from '../db/bigint.js';
import type { Database } from '../db/schema.js';

/** The sum of an account's ledger entries, which must always equal its balance. */
export async function sumOfEntries(db: Kysely<Database>, accountId: string): Promise<bigint> {
  const row = await db
    .selectFrom('ledger_entries')
    .select(sql<string | number>`coalesce(sum(amount), 0)`.as('total'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return toBigInt(row.total);
}

/** An account's balance as stored (holds the SQLite writer thread keeps unwritten not counted). */
export async function storedBalance(db: Kysely<Database>, accountId: string): Promise<bigint> {
  const row = await db
    .selectFrom('ledger_accounts')
    .select('balance')
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return row ? toBigInt(row.balance) : 0n;
}
