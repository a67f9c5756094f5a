import { randomUUID } from 'node:crypto';
import { sql, type Transaction } from 'kysely';
import { toBigInt } from '../db/bigint.js';
import type { Database } from '../db/schema.js';
import type { EntryKind } from './tables.js';

export type EntryParams = {
  accountId: string;
  kind: EntryKind;
  amount: bigint;
  reservedDelta?: bigint;
  spendDelta?: bigint;
  ref: string | null;
  now: number;
};

/**
 * Inside a transaction: changes one account's balance by `amount` (and `reserved`/`spend` by their
 * deltas) and appends the entry that records it. A debit only happens while the balance covers it
 * (`balance + amount >= 0` in the same UPDATE), so a balance never goes negative on either backend;
 * returns null when it does not. A pure credit creates the account if needed (one upsert).
 */
export async function applyEntry(
  trx: Transaction<Database>,
  params: EntryParams,
): Promise<{ entryId: string; balanceAfter: bigint } | null> {
  const balanceAfter = await moveBalance(trx, params);
  if (balanceAfter === null) return null;
  const [entryId] = await appendEntries(trx, [{ ...params, balanceAfter }]);
  return { entryId: entryId!, balanceAfter };
}

/** The balance change alone (no entry): returns the balance after it, or null when not covered. */
export async function moveBalance(trx: Transaction<Database>, params: EntryParams): Promise<bigint | null> {
  const { accountId, amount, now } = params;
  const reservedDelta = params.reservedDelta ?? 0n;
  const spendDelta = params.spendDelta ?? 0n;
  if (amount >= 0n && reservedDelta >= 0n && spendDelta >= 0n) {
    const row = await trx
      .insertInto('ledger_accounts')
      .values({
        account_id: accountId,
        balance: amount,
        reserved: reservedDelta,
        spend: spendDelta,
        updated_at: now,
      })
      .onConflict((oc) =>
        oc.column('account_id').doUpdateSet({
          balance: sql`ledger_accounts.balance + ${amount}`,
          reserved: sql`ledger_accounts.reserved + ${reservedDelta}`,
          spend: sql`ledger_accounts.spend + ${spendDelta}`,
          updated_at: now,
        }),
      )
      .returning('balance')
      .executeTakeFirstOrThrow();
    return toBigInt(row.balance);
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
  return row ? toBigInt(row.balance) : null;
}

/** Appends entries in one statement; returns their ids in order. */
export async function appendEntries(
  trx: Transaction<Database>,
  entries: readonly (EntryParams & { balanceAfter: bigint })[],
): Promise<string[]> {
  const rows = entries.map((e) => ({
    id: randomUUID(),
    account_id: e.accountId,
    kind: e.kind,
    amount: e.amount,
    balance_after: e.balanceAfter,
    ref: e.ref,
    created_at: e.now,
  }));
  if (rows.length > 0) await trx.insertInto('ledger_entries').values(rows).execute();
  return rows.map((r) => r.id);
}
