import { newId } from '../db/ids.js';
import { Statement } from '../db/statement.js';
import { applyEntry } from './apply-entry.js';
import { inLedgerBatch } from './batch.js';
import { type LedgerClock, type LedgerDb, systemLedgerClock } from './db.js';
import { assertPositive } from './ledger-input.js';
import { ENTRY_KINDS, RESERVATION_STATUS } from './tables.js';

export type ReserveParams = {
  userId: string;
  /** The worst-case cost of the request, nanousd. */
  amountNano: bigint;
  /** Reservation id; generated when absent. */
  reservationId?: string;
  clock?: LedgerClock;
};

export type ReserveResult =
  | { ok: true; reservationId: string; amountNano: bigint; balanceNano: bigint }
  | { ok: false; reason: 'insufficient_credits' };

const insertReservation = new Statement(
  `insert into ledger_reservations (id, account_id, amount, status, created_at, updated_at)
   values (?, ?, ?, '${RESERVATION_STATUS.held}', ?, ?)`,
);

/**
 * Holds `amountNano` of the user's credits for one request, atomically: the balance moves to
 * `reserved` only while it covers the amount (a conditional UPDATE), so concurrent reservations
 * can never overdraw it, on SQLite or PostgreSQL.
 */
export async function reserve(db: LedgerDb, params: ReserveParams): Promise<ReserveResult> {
  assertPositive(params.amountNano, 'amountNano');
  const now = (params.clock ?? systemLedgerClock).now();
  const reservationId = params.reservationId ?? newId(now);
  return inLedgerBatch(db, async (trx) => {
    const applied = await applyEntry(trx, {
      accountId: params.userId,
      kind: ENTRY_KINDS.reserve,
      amount: -params.amountNano,
      reservedDelta: params.amountNano,
      ref: reservationId,
      now,
    });
    if (!applied) return { ok: false as const, reason: 'insufficient_credits' as const };
    await insertReservation.all(trx, [reservationId, params.userId, params.amountNano, now, now]);
    return {
      ok: true as const,
      reservationId,
      amountNano: params.amountNano,
      balanceNano: applied.balanceAfter,
    };
  });
}
