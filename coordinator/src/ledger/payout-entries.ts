import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { ENTRY_KINDS, providerAccountId } from '../db/tables/ledger.js';
import { applyEntry } from './apply-entry.js';

/**
 * Inside the payout's transaction: takes `usdNano` off the owner's earnings (a guarded debit: it
 * never takes more than the balance). False when the balance does not cover it.
 */
export async function debitEarnings(
  trx: Kysely<Database>,
  { owner, usdNano, payoutId, now }: { owner: string; usdNano: bigint; payoutId: string; now: number },
): Promise<boolean> {
  const entry = await applyEntry(trx, {
    accountId: providerAccountId(owner),
    kind: ENTRY_KINDS.payout,
    amount: -usdNano,
    ref: payoutId,
    now,
  });
  return entry !== null;
}

/** Inside the transaction that fails a payout: gives its `usdNano` back to the owner's earnings. */
export async function refundEarnings(
  trx: Kysely<Database>,
  { owner, usdNano, payoutId, now }: { owner: string; usdNano: bigint; payoutId: string; now: number },
): Promise<void> {
  await applyEntry(trx, {
    accountId: providerAccountId(owner),
    kind: ENTRY_KINDS.payoutRefund,
    amount: usdNano,
    ref: payoutId,
    now,
  });
}
