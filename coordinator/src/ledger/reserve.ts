import type { Transaction } from 'kysely';
import { newId } from '../db/ids.js';
import type { Database } from '../db/schema.js';
import { Statement } from '../db/statement.js';
import { applyEntry } from './apply-entry.js';
import { inLedgerBatch } from './batch.js';
import { type LedgerClock, type LedgerDb, systemLedgerClock } from './db.js';
import { assertPositive } from './ledger-input.js';
import { ENTRY_KINDS, RESERVATION_STATUS } from './tables.js';
import type { Hold, ReserveResult } from './types.js';
import { ledgerWriterOf } from './writer.js';

export type { Hold, ReserveResult };

export type ReserveParams = {
  userId: string;
  /** The worst-case cost of the request, nanousd. */
  amountNano: bigint;
  /** Reservation id; generated when absent. */
  reservationId?: string;
  clock?: LedgerClock;
};

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
  const hold: Hold = {
    userId: params.userId,
    amountNano: params.amountNano,
    reservationId: params.reservationId ?? newId(now),
    now,
  };
  const writer = ledgerWriterOf(db);
  if (writer) return writer.reserve(hold, params.reservationId !== undefined);
  return inLedgerBatch(db, (trx) => reserveIn(trx, hold));
}

/** Inside a ledger transaction: places the hold if the balance covers it. */
export async function reserveIn(trx: Transaction<Database>, hold: Hold): Promise<ReserveResult> {
  const applied = await applyEntry(trx, {
    accountId: hold.userId,
    kind: ENTRY_KINDS.reserve,
    amount: -hold.amountNano,
    reservedDelta: hold.amountNano,
    ref: hold.reservationId,
    now: hold.now,
  });
  if (!applied) return { ok: false, reason: 'insufficient_credits' };
  await insertReservation.all(trx, [hold.reservationId, hold.userId, hold.amountNano, hold.now, hold.now]);
  return {
    ok: true,
    reservationId: hold.reservationId,
    amountNano: hold.amountNano,
    balanceNano: applied.balanceAfter,
  };
}
