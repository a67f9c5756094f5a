import { Statement } from '../db/statement.js';
import { ENTRY_KINDS, PLATFORM_ACCOUNT_ID } from '../db/tables/ledger.js';
import type { Tx } from '../db/tx.js';
import { capCharge } from '../pricing/price.js';
import { appendEntries, type EntryParams, moveBalance } from './apply-entry.js';
import { creditAtCommit } from './credits-at-commit.js';
import { recordUsage } from './record-usage.js';
import { takeReservation } from './take-reservation.js';
import type { Hold, Settlement, SettleOutcome } from './types.js';

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
  const charge = capCharge(params.providerNano, params.feeNano, held.amount);
  // One UPDATE and one entry: the hold comes back less what the request cost (the charge itself
  // is in the usage row). Cannot fail: the charge ≤ the hold released.
  const entry = settleEntry(held.accountId, held.amount, charge.chargedNano, params);
  const balanceNano = await moveBalance(trx, {
    ...entry,
    reservedDelta: -held.amount,
    spendDelta: charge.chargedNano,
  });
  if (balanceNano === null) throw new Error('settlement could not release its own hold');
  await appendEntries(trx, [{ ...entry, balanceAfter: balanceNano }]);
  return record(trx, params, held, charge, balanceNano);
}

/** The hold and its settlement in one: the balance moves by the charge, while it covers the hold. */
const chargeCovered = new Statement<{ balance: string | number | bigint }>(
  `update ledger_accounts set balance = balance - ?, spend = spend + ?, updated_at = ?
   where account_id = ? and balance >= ?
   returning balance`,
);

/**
 * Inside a ledger transaction: settles a hold that was never written (unwritten-holds.ts): one
 * UPDATE of the balance, the two entries a written hold and its settlement leave (reserve, settle:
 * their ref names the hold), the credits and the usage row. No reservation row: it would only say
 * "settled", which the entries say. Null when the balance does not cover the hold (as a written
 * hold refused at its commit): nothing changes.
 */
export async function settleUnwrittenIn(
  trx: Tx,
  hold: Hold,
  params: Settlement,
): Promise<SettleOutcome | null> {
  const { now } = params;
  const charge = capCharge(params.providerNano, params.feeNano, hold.amountNano);
  const row = await chargeCovered.first(trx, [
    charge.chargedNano,
    charge.chargedNano,
    now,
    hold.userId,
    hold.amountNano,
  ]);
  if (!row) return null;
  const balanceNano = BigInt(row.balance);
  const reserve = {
    accountId: hold.userId,
    kind: ENTRY_KINDS.reserve,
    amount: -hold.amountNano,
    ref: hold.reservationId,
    now: hold.now,
    balanceAfter: balanceNano + charge.chargedNano - hold.amountNano,
  };
  const settle = settleEntry(hold.userId, hold.amountNano, charge.chargedNano, params);
  await appendEntries(trx, [reserve, { ...settle, balanceAfter: balanceNano }]);
  return record(trx, params, { accountId: hold.userId, amount: hold.amountNano }, charge, balanceNano);
}

function settleEntry(
  accountId: string,
  heldNano: bigint,
  chargedNano: bigint,
  params: Settlement,
): EntryParams {
  return {
    accountId,
    kind: ENTRY_KINDS.settle,
    amount: heldNano - chargedNano,
    ref: params.reservationId,
    now: params.now,
  };
}

/** The provider's earnings, the fee (paid once per account for the whole group commit) and the usage row. */
async function record(
  trx: Tx,
  params: Settlement,
  held: { accountId: string; amount: bigint },
  charge: ReturnType<typeof capCharge>,
  balanceNano: bigint,
): Promise<SettleOutcome> {
  const { providerNano, feeNano, chargedNano } = charge;
  creditAtCommit(trx, {
    accountId: params.providerAccountId,
    kind: ENTRY_KINDS.providerCredit,
    amount: providerNano,
    now: params.now,
  });
  creditAtCommit(trx, {
    accountId: PLATFORM_ACCOUNT_ID,
    kind: ENTRY_KINDS.fee,
    amount: feeNano,
    now: params.now,
  });
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
