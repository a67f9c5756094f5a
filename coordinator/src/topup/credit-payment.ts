import type { Kysely } from 'kysely';
import { formatUnits } from 'viem';
import { NATIVE_DECIMALS, type PaymentSource, STABLE_DECIMALS } from '../chain/constants.js';
import type { Clock } from '../clock.js';
import { toBigInt, toBigIntOrNull } from '../db/bigint.js';
import type { Database } from '../db/schema.js';
import { ApiError } from '../errors.js';
import { credit } from '../ledger/credit.js';
import { nanoToUsd } from '../ledger/money.js';

/** The top-up response (design.md): 200 credited, or 202 pending until confirmed. */
export type TopupResult = {
  status: 'credited' | 'pending';
  paymentId: string;
  source: PaymentSource;
  /** What the transaction paid the proxy wallet, in tokens (decimal string); null if not yet mined. */
  amount: string | null;
  /** USD credited by this payment (0 while pending). */
  creditedUsd: number;
  /** The user's credit balance in USD (right after the credit, for a credited payment). */
  balance: number;
};

type TopupRow = {
  payment_id: string;
  user_id: string;
  source: string;
  amount: string;
  credited_nano: bigint | number | string;
  status: string;
  balance_nano: bigint | number | string | null;
};

export type CreditPaymentParameters = {
  userId: string;
  /** The transaction hash, lowercase. */
  paymentId: string;
  source: PaymentSource;
  /** Verified amount paid to the user's proxy wallet, smallest unit. */
  amount: bigint;
  creditedNano: bigint;
  blockNumber: bigint;
};

/**
 * Credits a verified payment once, ever: claims the paymentId with the `topups` primary key, then
 * credits through the ledger (unique per ref in its own transaction) and stores the result. A
 * paymentId already claimed returns the stored result to the same user, 409 to anyone else.
 * Used by the top-up route and the deposit watcher.
 */
export async function creditPayment(
  { db, clock }: { db: Kysely<Database>; clock: Clock },
  { userId, paymentId, source, amount, creditedNano, blockNumber }: CreditPaymentParameters,
): Promise<TopupResult> {
  try {
    await db
      .insertInto('topups')
      .values({
        payment_id: paymentId,
        user_id: userId,
        source,
        amount: amount.toString(),
        credited_nano: creditedNano,
        status: 'crediting',
        balance_nano: null,
        block_number: blockNumber,
        created_at: clock.now(),
      })
      .execute();
  } catch (error) {
    // Another request claimed this paymentId first (the primary key): answer as a repeat.
    const winner = await findTopup(db, paymentId);
    if (!winner) throw error;
    return replay(db, clock, userId, winner);
  }
  return finish(db, clock, userId, (await findTopup(db, paymentId))!);
}

async function findTopup(db: Kysely<Database>, paymentId: string): Promise<TopupRow | undefined> {
  return db.selectFrom('topups').selectAll().where('payment_id', '=', paymentId).executeTakeFirst();
}

/** A paymentId seen before: the same user gets the original result; anyone else 409. */
/**
 * The stored result of a paymentId seen before, for `userId`: the original result (finishing a
 * credit a crashed request left half done), 409 payment_already_used if it was someone else's,
 * null if the paymentId is new.
 */
export async function replayPayment(
  { db, clock }: { db: Kysely<Database>; clock: Clock },
  { userId, paymentId }: { userId: string; paymentId: string },
): Promise<TopupResult | null> {
  const row = await findTopup(db, paymentId);
  return row ? replay(db, clock, userId, row) : null;
}

async function replay(
  db: Kysely<Database>,
  clock: Clock,
  userId: string,
  row: TopupRow,
): Promise<TopupResult> {
  if (row.user_id !== userId) {
    throw new ApiError('payment_already_used', 'This payment was already credited to another account.', {
      param: 'paymentId',
    });
  }
  return row.status === 'credited' ? resultOf(row) : finish(db, clock, userId, row);
}

/** Credits a claimed payment through the ledger (idempotent on the paymentId) and stores the result. */
async function finish(
  db: Kysely<Database>,
  clock: Clock,
  userId: string,
  row: TopupRow,
): Promise<TopupResult> {
  const result = await credit(db, {
    userId,
    amountNano: toBigInt(row.credited_nano),
    kind: 'topup',
    ref: row.payment_id,
    clock,
  });
  if (!result.credited && result.userId !== userId) {
    throw new ApiError('payment_already_used', 'This payment was already credited to another account.', {
      param: 'paymentId',
    });
  }
  await db
    .updateTable('topups')
    .set({ status: 'credited', balance_nano: result.balanceNano })
    .where('payment_id', '=', row.payment_id)
    .where('status', '=', 'crediting')
    .execute();
  return resultOf((await findTopup(db, row.payment_id))!);
}

function resultOf(row: TopupRow): TopupResult {
  const source = row.source as PaymentSource;
  return {
    status: 'credited',
    paymentId: row.payment_id,
    source,
    amount: formatAmount(source, BigInt(row.amount)),
    creditedUsd: nanoToUsd(toBigInt(row.credited_nano)),
    balance: nanoToUsd(toBigIntOrNull(row.balance_nano) ?? 0n),
  };
}

function formatAmount(source: PaymentSource, amount: bigint): string {
  return formatUnits(amount, source === 'native' ? NATIVE_DECIMALS : STABLE_DECIMALS);
}
