import { applyEntry } from './apply-entry.js';
import { inLedgerBatch } from './batch.js';
import { type LedgerClock, type LedgerDb, systemLedgerClock } from './db.js';
import { ENTRY_KINDS } from './tables.js';
import { takeReservation } from './take-reservation.js';

/**
 * Gives a whole reservation back (the request failed before anything was delivered). Idempotent:
 * releasing a reservation that is already settled or released changes nothing and returns false.
 */
export async function release(
  db: LedgerDb,
  params: { reservationId: string; clock?: LedgerClock },
): Promise<boolean> {
  const now = (params.clock ?? systemLedgerClock).now();
  return inLedgerBatch(db, async (trx) => {
    const held = await takeReservation(trx, params.reservationId, 'released', now);
    if (!held) return false;
    await applyEntry(trx, {
      accountId: held.accountId,
      kind: ENTRY_KINDS.release,
      amount: held.amount,
      reservedDelta: -held.amount,
      ref: params.reservationId,
      now,
    });
    return true;
  });
}
