import type { Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import { recordUsage } from '../usage/record-usage.js';
import { appendEntries, moveBalance } from './apply-entry.js';
import { inLedgerBatch } from './batch.js';
import { creditAtCommit } from './credits-at-commit.js';
import { type LedgerClock, type LedgerDb, systemLedgerClock } from './db.js';
import { LedgerInputError } from './ledger-input.js';
import { ENTRY_KINDS, PLATFORM_ACCOUNT_ID } from './tables.js';
import { takeReservation } from './take-reservation.js';
import type { Settlement, SettleOutcome } from './types.js';
import { ledgerWriterOf } from './writer.js';

/** A settlement to make: its time comes from `clock` (default the system's). */
export type SettleParams = Omit<Settlement, 'now'> & { clock?: LedgerClock };

export type { Settlement, SettleOutcome };

/**
 * What a settlement charges: provider + fee, never more than the hold — capped fee first, so the
 * provider is paid what can be paid. Pure, so a caller can tell the charge before it commits.
 */
export function capCharge(
  providerNano: bigint,
  feeNano: bigint,
  heldNano: bigint,
): { providerNano: bigint; feeNano: bigint; chargedNano: bigint } {
  if (providerNano + feeNano <= heldNano)
    return { providerNano, feeNano, chargedNano: providerNano + feeNano };
  // biome-ignore lint/complexity/useMathMinMax: bigint (Math.min takes numbers)
  const provider = providerNano > heldNano ? heldNano : providerNano;
  return { providerNano: provider, feeNano: heldNano - provider, chargedNano: heldNano };
}

/**
 * Settles a reservation to the actual cost, in ONE transaction: releases the hold, charges the user
 * what was delivered, credits the provider and the platform fee (summed per account over the group
 * commit, see credits-at-commit.ts), and writes the usage row.
 * The charge can never exceed the reservation (the worst case) — a node that over-reports is capped.
 * Idempotent: a reservation settles or releases once; a repeat returns null and changes nothing.
 */
export async function settle(db: LedgerDb, params: SettleParams): Promise<SettleOutcome | null> {
  if (params.providerNano < 0n || params.feeNano < 0n) throw new LedgerInputError('negative settlement');
  const { clock, ...rest } = params;
  const settlement: Settlement = { ...rest, now: (clock ?? systemLedgerClock).now() };
  const writer = ledgerWriterOf(db);
  if (writer) return writer.settle(settlement);
  return inLedgerBatch(db, (trx) => settleIn(trx, settlement));
}

/** Inside a ledger transaction: the settlement, or null when the hold is no longer held. */
export async function settleIn(
  trx: Transaction<Database>,
  params: Settlement,
): Promise<SettleOutcome | null> {
  const { now } = params;
  const held = await takeReservation(trx, params.reservationId, 'settled', now);
  if (!held) return null;
  const { providerNano, feeNano, chargedNano } = capCharge(params.providerNano, params.feeNano, held.amount);
  // One UPDATE and one entry: the hold comes back less what the request cost (the charge itself
  // is in the usage row). Cannot fail: the charge ≤ the hold released.
  const entry = {
    accountId: held.accountId,
    kind: ENTRY_KINDS.settle,
    amount: held.amount - chargedNano,
    ref: params.reservationId,
    now,
  };
  const balanceNano = await moveBalance(trx, {
    ...entry,
    reservedDelta: -held.amount,
    spendDelta: chargedNano,
  });
  if (balanceNano === null) throw new Error('settlement could not release its own hold');
  // The provider's earnings and the fee: paid once per account for the whole group commit.
  creditAtCommit(trx, {
    accountId: params.providerAccountId,
    kind: ENTRY_KINDS.providerCredit,
    amount: providerNano,
    now,
  });
  creditAtCommit(trx, { accountId: PLATFORM_ACCOUNT_ID, kind: ENTRY_KINDS.fee, amount: feeNano, now });
  await appendEntries(trx, [{ ...entry, balanceAfter: balanceNano }]);
  const outcome: SettleOutcome = {
    accountId: held.accountId,
    chargedNano,
    providerNano,
    feeNano,
    releasedNano: held.amount - chargedNano,
    balanceNano,
  };
  if (params.usage) await recordUsage(trx, { ...params.usage, outcome });
  return outcome;
}
