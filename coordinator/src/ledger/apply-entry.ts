import type { Kysely } from 'kysely';
import { toBigInt } from '../db/bigint.js';
import { newId } from '../db/ids.js';
import type { Database } from '../db/schema.js';
import { Statement, valueRows } from '../db/statement.js';
import type { EntryKind } from '../db/tables/ledger.js';
import type { Tx } from '../db/tx.js';

export type EntryParams = {
  accountId: string;
  kind: EntryKind;
  amount: bigint;
  reservedDelta?: bigint;
  spendDelta?: bigint;
  ref: string | null;
  now: number;
};

type BalanceRow = { balance: string | number | bigint };

/** A pure credit: creates the account or adds to it, in one upsert. */
const upsertCredit = new Statement<BalanceRow>(
  `insert into ledger_accounts (account_id, balance, reserved, spend, updated_at) values (?, ?, ?, ?, ?)
   on conflict (account_id) do update set
     balance = ledger_accounts.balance + excluded.balance,
     reserved = ledger_accounts.reserved + excluded.reserved,
     spend = ledger_accounts.spend + excluded.spend,
     updated_at = excluded.updated_at
   returning balance`,
);

/** Any other change: applies only while the balance covers it. */
const guardedUpdate = new Statement<BalanceRow>(
  `update ledger_accounts
   set balance = balance + ?, reserved = reserved + ?, spend = spend + ?, updated_at = ?
   where account_id = ? and balance + ? >= 0
   returning balance`,
);

const ENTRY_COLUMNS = '(id, account_id, kind, amount, balance_after, ref, created_at)';
/** Insert statements by row count (a settlement writes up to four entries at once). */
const insertEntries = new Map<number, Statement>();

/**
 * Inside a transaction: changes one account's balance by `amount` (and `reserved`/`spend` by their
 * deltas) and appends the entry that records it. A debit only happens while the balance covers it
 * (`balance + amount >= 0` in the same UPDATE), so a balance never goes negative on either backend;
 * returns null when it does not. A pure credit creates the account if needed (one upsert).
 */
export async function applyEntry(
  trx: Kysely<Database> | Tx,
  params: EntryParams,
): Promise<{ entryId: string; balanceAfter: bigint } | null> {
  const balanceAfter = await moveBalance(trx, params);
  if (balanceAfter === null) return null;
  const [entryId] = await appendEntries(trx, [{ ...params, balanceAfter }]);
  return { entryId: entryId!, balanceAfter };
}

/** The balance change alone (no entry): returns the balance after it, or null when not covered. */
export async function moveBalance(trx: Kysely<Database> | Tx, params: EntryParams): Promise<bigint | null> {
  const { accountId, amount, now } = params;
  const reservedDelta = params.reservedDelta ?? 0n;
  const spendDelta = params.spendDelta ?? 0n;
  const row =
    amount >= 0n && reservedDelta >= 0n && spendDelta >= 0n
      ? await upsertCredit.first(trx, [accountId, amount, reservedDelta, spendDelta, now])
      : await guardedUpdate.first(trx, [amount, reservedDelta, spendDelta, now, accountId, amount]);
  return row ? toBigInt(row.balance) : null;
}

/** Appends entries in one statement; returns their ids in order. */
export async function appendEntries(
  trx: Kysely<Database> | Tx,
  entries: readonly (EntryParams & { balanceAfter: bigint })[],
): Promise<string[]> {
  if (entries.length === 0) return [];
  let insert = insertEntries.get(entries.length);
  if (!insert) {
    insert = new Statement(
      `insert into ledger_entries ${ENTRY_COLUMNS} values ${valueRows(7, entries.length)}`,
    );
    insertEntries.set(entries.length, insert);
  }
  const ids: string[] = [];
  const params: unknown[] = [];
  for (const e of entries) {
    const id = newId(e.now);
    ids.push(id);
    params.push(id, e.accountId, e.kind, e.amount, e.balanceAfter, e.ref, e.now);
  }
  await insert.all(trx, params);
  return ids;
}
