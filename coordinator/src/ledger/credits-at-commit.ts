import { newId } from '../db/ids.js';
import type { EntryKind } from '../db/tables/ledger.js';
import type { Tx } from '../db/tx.js';
import { appendEntries, type EntryParams, moveBalance } from './apply-entry.js';
import { AtCommit } from './at-commit.js';

type Credit = { accountId: string; kind: EntryKind; amount: bigint; now: number };

/**
 * Credits (a provider's earnings, the platform fee) paid once per account per group commit: every
 * settlement of a commit credits the same few accounts (on PostgreSQL the platform's row, updated
 * by every settlement, also serialised them). The entry's ref is its own id: the settlements it
 * sums are in the usage rows.
 */
const credits = new AtCommit<Credit>({
  merge(sum, next) {
    sum.amount += next.amount;
    sum.now = Math.max(sum.now, next.now);
  },
  async write(tx, sums) {
    const entries: (EntryParams & { balanceAfter: bigint })[] = [];
    for (const credit of sums) {
      const entry = { ...credit, ref: newId(credit.now) };
      const balanceAfter = await moveBalance(tx, entry);
      entries.push({ ...entry, balanceAfter: balanceAfter! });
    }
    await appendEntries(tx, entries);
  },
});

/** Adds a credit to what this transaction pays its account when it ends. */
export function creditAtCommit(tx: Tx, credit: Credit): void {
  if (credit.amount <= 0n) return;
  credits.add(tx, `${credit.kind}\u0000${credit.accountId}`, credit);
}
