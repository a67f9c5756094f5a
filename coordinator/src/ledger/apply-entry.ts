import { randomUUID } from 'node:crypto';
import { sql, type Transaction } from 'kysely';
import { toBigInt } from '../db/bigint.js';
import type { Database } from '../db/schema.js';
import type { EntryKind } from './tables.js';

/**
 * Inside a transaction: changes one account's balance by `amount` (and `reserved`/`spend` by their
 * deltas) and appends the entry that records it. A debit only happens while the balance covers it
 * (`balance + amount >= 0` in the same UPDATE), so a balance never goes negative on either backend;
 * returns null when it does not. Creates the account on a first credit.
 */
export async function applyEntry(
  trx: Transaction<Database>,
  params: {
    accountId: string;
    kind: EntryKind;
    amount: bigint;
    reservedDelta?: bigint;
    spendDelta?: bigint;
    ref: string | null;
    now: number;
  },
): Promise<{ entryId: string; balanceAfter: bigint } | null> {
  const { accountId, kind, amount, ref, now } = params;
  const reservedDelta = params.reservedDelta ?? 0n;
  const spendDelta = params.spendDelta ?? 0n;
  if (amount >= 0n) {
    await trx
      .insertInto('ledger_accounts')
      .values({ account_id: accountId, balance: 0n, reserved: 0n, spend: 0n, updated_at: now })
      .onConflict((oc) => oc.column('account_id').doNothing())
      .execute();
  }
  const row = await trx
    .updateTable('ledger_accounts')
    .set({
      balance: sql`balance + ${amount}`,
      reserved: sql`reserved + ${reservedDelta}`,
      spend: sql`spend + ${spendDelta}`,
      updated_at: now,
    })
    .where('account_id', '=', accountId)
    .where(sql<boolean>`balance + ${amount} >= 0`)
    .returning('balance')
    .executeTakeFirst();
  if (!row) return null;
  const balanceAfter = toBigInt(row.balance);
  const entryId = randomUUID();
  await trx
    .insertInto('ledger_entries')
    .values({
      id: entryId,
      account_id: accountId,
      kind,
      amount,
      balance_after: balanceAfter,
      ref,
      created_at: now,
    })
    .execute();
  return { entryId, balanceAfter };
}
