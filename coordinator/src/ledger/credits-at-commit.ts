import type { Transaction } from 'kysely';
import { newId } from '../db/ids.js';
import type { Database } from '../db/schema.js';
import { appendEntries, type EntryParams, moveBalance } from './apply-entry.js';
import type { EntryKind } from './tables.js';

type Pending = { accountId: string; kind: EntryKind; amount: bigint; now: number };

const pendingByTransaction = new WeakMap<Transaction<Database>, Map<string, Pending>>();

/**
 * Adds a credit (a provider's earnings, the platform fee) to what this transaction pays each
 * account when it ends: every settlement of a group commit credits the same few accounts, and one
 * UPDATE and one entry per account for the whole commit cost far less than one per settlement (on
 * PostgreSQL the platform's row, updated by every settlement, also serialised them). The entry's
 * ref is its own id: the settlements it sums are in the usage rows.
 */
export function creditAtCommit(trx: Transaction<Database>, credit: Pending): void {
  if (credit.amount <= 0n) return;
  let pending = pendingByTransaction.get(trx);
  if (!pending) {
    pending = new Map();
    pendingByTransaction.set(trx, pending);
  }
  const key = `${credit.kind}\u0000${credit.accountId}`;
  const sum = pending.get(key);
  if (sum) {
    sum.amount += credit.amount;
    sum.now = Math.max(sum.now, credit.now);
  } else pending.set(key, { ...credit });
}

/** Pays what `creditAtCommit` gathered in this transaction; the ledger's batches call it last. */
export async function payCreditsAtCommit(trx: Transaction<Database>): Promise<void> {
  const pending = pendingByTransaction.get(trx);
  if (!pending) return;
  pendingByTransaction.delete(trx);
  const entries: (EntryParams & { balanceAfter: bigint })[] = [];
  for (const credit of pending.values()) {
    const entry = { ...credit, ref: newId(credit.now) };
    const balanceAfter = await moveBalance(trx, entry);
    entries.push({ ...entry, balanceAfter: balanceAfter! });
  }
  await appendEntries(trx, entries);
}
