import type { Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import { applyEntry } from './apply-entry.js';
import { inLedgerBatch } from './batch.js';
import { type LedgerClock, type LedgerDb, systemLedgerClock } from './db.js';
import { ENTRY_KINDS } from './tables.js';
import { takeReservation } from './take-reservation.js';
import { ledgerWriterOf } from './writer.js';

/**
 * Gives a whole reservation back (the request failed before anything was delivered). Idempotent:
 * releasing a reservation that is already settled or released changes nothing and returns false.
 */
export async function release(
  db: LedgerDb,
  params: { reservationId: string; clock?: LedgerClock },
): Promise<boolean> {
  const now = (params.clock ?? systemLedgerClock).now();
  const writer = ledgerWriterOf(db);
  if (writer) return writer.release(params.reservationId, now);
  return (await inLedgerBatch(db, (trx) => releaseIn(trx, params.reservationId, now))) !== null;
}

/**
 * Inside a ledger transaction: releases the hold if it is still held; returns its account and that
 * account's balance after, or null.
 */
export async function releaseIn(
  trx: Transaction<Database>,
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
