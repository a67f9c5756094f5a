import { Statement } from '../db/statement.js';
import { ENTRY_KINDS, RESERVATION_STATUS } from '../db/tables/ledger.js';
import type { Tx } from '../db/tx.js';
import { applyEntry } from './apply-entry.js';
import type { Hold, ReserveResult } from './types.js';

const insertReservation = new Statement(
  `insert into ledger_reservations (id, account_id, amount, status, created_at, updated_at, holder)
   values (?, ?, ?, '${RESERVATION_STATUS.held}', ?, ?, ?)`,
);

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
  await insertReservation.all(trx, [
    hold.reservationId,
    hold.userId,
    hold.amountNano,
    hold.now,
    hold.now,
    hold.holder,
  ]);
  return {
    ok: true,
    reservationId: hold.reservationId,
    amountNano: hold.amountNano,
    balanceNano: applied.balanceAfter,
  };
}
