import { Statement } from '../db/statement.js';
import { ENTRY_KINDS, RESERVATION_STATUS, type ReservationStatus } from '../db/tables/ledger.js';
import type { Tx } from '../db/tx.js';
import { applyEntry } from './apply-entry.js';
import type { Hold, ReserveResult } from './types.js';

const insertRow = new Statement(
  `insert into ledger_reservations (id, account_id, amount, status, created_at, updated_at, holder)
   values (?, ?, ?, ?, ?, ?, ?)`,
);

/** Inside a transaction: the hold's reservation row, in `status` as of `updatedAt`. */
export async function insertReservation(
  trx: Tx,
  hold: Hold,
  status: ReservationStatus,
  updatedAt: number,
): Promise<void> {
  await insertRow.all(trx, [
    hold.reservationId,
    hold.userId,
    hold.amountNano,
    status,
    hold.now,
    updatedAt,
    hold.holder,
  ]);
}

/**
 * Inside a ledger transaction: holds `amountNano` of the user's credits for one request. The
 * balance moves to `reserved` only while it covers the amount (a conditional UPDATE), so
 * concurrent reservations can never overdraw it, on SQLite or PostgreSQL.
 */
export async function reserveIn(trx: Tx, hold: Hold): Promise<ReserveResult> {
  const applied = await applyEntry(trx, {
    accountId: hold.userId,
    kind: ENTRY_KINDS.reserve,
    amount: -hold.amountNano,
    reservedDelta: hold.amountNano,
    ref: hold.reservationId,
    now: hold.now,
  });
  if (!applied) return { ok: false, reason: 'insufficient_credits' };
  await insertReservation(trx, hold, RESERVATION_STATUS.held, hold.now);
  return {
    ok: true,
    reservationId: hold.reservationId,
    amountNano: hold.amountNano,
    balanceNano: applied.balanceAfter,
  };
}
