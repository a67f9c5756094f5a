import { ENTRY_KINDS } from '../db/tables/ledger.js';
import type { Tx } from '../db/tx.js';
import { applyEntry } from './apply-entry.js';
import { takeReservation } from './take-reservation.js';

/**
 * Inside a ledger transaction: gives a whole reservation back (the request failed before anything
 * was delivered) if it is still held; returns its account and that account's balance after, or
 * null (already settled or released: nothing changes).
 */
export async function releaseIn(
  trx: Tx,
  reservationId: string,
  now: number,
): Promise<{ accountId: string; balanceNano: bigint } | null> {
  const held = await takeReservation(trx, reservationId, 'released', now);
  if (!held) return null;
  const applied = await applyEntry(trx, {
    accountId: held.accountId,
    kind: ENTRY_KINDS.release,
    amount: held.amount,
    reservedDelta: -held.amount,
    ref: reservationId,
    now,
  });
  return { accountId: held.accountId, balanceNano: applied!.balanceAfter };
}
