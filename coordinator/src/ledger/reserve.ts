import { randomUUID } from 'node:crypto';
import { applyEntry } from './apply-entry.js';
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

/**
 * Holds `amountNano` of the user's credits for one request, atomically: the balance moves to
 * `reserved` only while it covers the amount (a conditional UPDATE), so concurrent reservations
 * can never overdraw it, on SQLite or PostgreSQL.
 */
export async function reserve(db: LedgerDb, params: ReserveParams): Promise<ReserveResult> {
  assertPositive(params.amountNano, 'amountNano');
  const reservationId = params.reservationId ?? randomUUID();
  const now = (params.clock ?? systemLedgerClock).now();
  return db.transaction().execute(async (trx) => {
    const applied = await applyEntry(trx, {
      accountId: params.userId,
      kind: ENTRY_KINDS.reserve,
      amount: -params.amountNano,
      reservedDelta: params.amountNano,
      ref: reservationId,
      now,
    });
    if (!applied) return { ok: false as const, reason: 'insufficient_credits' as const };
    await trx
      .insertInto('ledger_reservations')
      .values({
        id: reservationId,
        account_id: params.userId,
        amount: params.amountNano,
        status: RESERVATION_STATUS.held,
        created_at: now,
        updated_at: now,
      })
      .execute();
    return {
      ok: true as const,
      reservationId,
      amountNano: params.amountNano,
      balanceNano: applied.balanceAfter,
    };
  });
}
