import { ENTRY_KINDS, PLATFORM_ACCOUNT_ID } from '../db/tables/ledger.js';
import type { Tx } from '../db/tx.js';
import { appendEntries, moveBalance } from './apply-entry.js';
import { capCharge } from './charges.js';
import { creditAtCommit } from './credits-at-commit.js';
import { recordUsage } from './record-usage.js';
import { takeReservation } from './take-reservation.js';
import type { Settlement, SettleOutcome } from './types.js';

/**
 * Inside a ledger transaction: settles a reservation to the actual cost — releases the hold,
 * charges the user what was delivered, credits the provider and the platform fee (summed per
 * account over the group commit, see credits-at-commit.ts), and writes the usage row. The charge
 * never exceeds the hold (the worst case): a node that over-reports is capped. A reservation
 * settles or releases once: null when it is no longer held, and nothing changes.
 */
export async function settleIn(trx: Tx, params: Settlement): Promise<SettleOutcome | null> {
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
