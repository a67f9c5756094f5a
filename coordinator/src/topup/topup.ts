import type { Kysely } from 'kysely';
import { formatUnits } from 'viem';
import { NATIVE_DECIMALS, type PaymentSource, STABLE_DECIMALS } from '../chain/constants.js';
import type { ChainServices } from '../chain/create-chain-services.js';
import { verifyPayment } from '../chain/verify-payment.js';
import type { Clock } from '../clock.js';
import { toBigInt, toBigIntOrNull } from '../db/bigint.js';
import type { Database } from '../db/schema.js';
import { ApiError } from '../errors.js';
import { credit } from '../ledger/credit.js';
import { getBalance } from '../ledger/get-balance.js';
import { getWallets } from '../wallets/get-wallets.js';
import { AMOUNT_TOLERANCE_NANO, nanoToUsd, pricePayment, usdToNano } from './price-payment.js';

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

export type TopupParameters = {
  user: { id: string };
  paymentId: string;
  source: PaymentSource;
  amountUsd: number;
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

/**
 * Credits a payment the user sent to their proxy wallet, once, ever. The chain is the only source
 * of truth (verifyPayment); amountUsd must match the verified value within half a cent. The
 * paymentId is claimed by a row with a unique key before the ledger credit (itself unique per ref
 * inside its transaction), so concurrent and repeated calls credit once: a repeat by the same user
 * returns the original result, by anyone else 409 payment_already_used. Refusals record nothing.
 */
export async function topup(
  { db, services, clock }: { db: Kysely<Database>; services: ChainServices; clock: Clock },
  { user, paymentId: rawPaymentId, source, amountUsd }: TopupParameters,
): Promise<TopupResult> {
  const claimedNano = usdToNano(amountUsd);
  if (claimedNano === null) {
    throw new ApiError('invalid_request', 'amountUsd must be a non-negative number.', { param: 'amountUsd' });
  }
  const paymentId = rawPaymentId.toLowerCase();
  const previous = await findTopup(db, paymentId);
  if (previous) return replay(db, services, clock, user.id, previous);

  const wallets = await getWallets(db, user.id);
  if (!wallets) throw new ApiError('not_found', 'This user has no proxy wallet yet.');
  const verified = await verifyPayment(services.context, {
    hash: rawPaymentId,
    source,
    recipient: wallets.proxyAddress,
    tokens: services.tokens,
    confirmations: services.confirmations,
  });
  if (verified.status === 'pending') {
    const { balanceNano } = await getBalance(db, user.id);
    return {
      status: 'pending',
      paymentId,
      source,
      amount: verified.amount === null ? null : formatAmount(source, verified.amount),
      creditedUsd: 0,
      balance: nanoToUsd(balanceNano),
    };
  }
  const creditedNano = pricePayment(source, verified.amount, services.nativeUsdPriceNano);
  const difference = claimedNano > creditedNano ? claimedNano - creditedNano : creditedNano - claimedNano;
  if (difference > AMOUNT_TOLERANCE_NANO) {
    throw new ApiError(
      'amount_mismatch',
      `The transaction paid ${formatAmount(source, verified.amount)} ${source}, worth ${nanoToUsd(creditedNano)} USD, not ${amountUsd}.`,
      { param: 'amountUsd' },
    );
  }
  if (creditedNano === 0n) {
    throw new ApiError('invalid_request', 'The payment is worth less than one nanousd.', {
      param: 'paymentId',
    });
  }
  try {
    await db
      .insertInto('topups')
      .values({
        payment_id: paymentId,
        user_id: user.id,
        source,
        amount: verified.amount.toString(),
        credited_nano: creditedNano,
        status: 'crediting',
        balance_nano: null,
        block_number: verified.blockNumber,
        created_at: clock.now(),
      })
      .execute();
  } catch (error) {
    // Another request claimed this paymentId first (the primary key): answer as a repeat.
    const winner = await findTopup(db, paymentId);
    if (!winner) throw error;
    return replay(db, services, clock, user.id, winner);
  }
  return finish(db, clock, user.id, (await findTopup(db, paymentId))!);
}

async function findTopup(db: Kysely<Database>, paymentId: string): Promise<TopupRow | undefined> {
  return db.selectFrom('topups').selectAll().where('payment_id', '=', paymentId).executeTakeFirst();
}

/** A paymentId seen before: the same user gets the original result; anyone else 409. */
async function replay(
  db: Kysely<Database>,
  _services: ChainServices,
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
