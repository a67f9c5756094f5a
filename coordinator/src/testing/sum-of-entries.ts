import { sql } from 'kysely';
import { toBigInt } from '../db/bigint.js';
import type { LedgerDb } from '../ledger/db.js';

/** The sum of an account's ledger entries, which must always equal its balance. */
export async function sumOfEntries(db: LedgerDb, accountId: string): Promise<bigint> {
  const row = await db
    .selectFrom('ledger_entries')
    .select(sql<string | number>`coalesce(sum(amount), 0)`.as('total'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return toBigInt(row.total);
}
