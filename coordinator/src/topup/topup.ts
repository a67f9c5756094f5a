import type { Kysely } from 'kysely';
import { formatUnits } from 'viem';
import { NATIVE_DECIMALS, type PaymentSource, STABLE_DECIMALS } from '../chain/constants.js';
import type { ChainServices } from '../chain/create-chain-services.js';
import { verifyPayment } from '../chain/verify-payment.js';
import type { Clock } from '../clock.js';
import type { Database } from '../db/schema.js';
import { ApiError } from '../errors.js';
import type { Ledger } from '../ledger/ledger.js';
import { nanoToUsd, usdToNano } from '../ledger/money.js';
import { getWallets } from '../wallets/get-wallets.js';
import { creditDeposit } from './credit-deposit.js';
import { replayPayment, type TopupResult } from './credit-payment.js';
import { depositAmount } from './deposit-amount.js';
import { AMOUNT_TOLERANCE_NANO, pricePayment } from './price-payment.js';

export type { TopupResult };

export type TopupParameters = {
  user: { id: string };
  paymentId: string;
  source: PaymentSource;
  amountUsd: number;
};

/**
 * Credits a payment the user sent to their proxy wallet, once, ever. The chain is the only source
 * of truth (verifyPayment); only transfers from outside the service's wallets count
 * (depositAmount), and only while their tokens are still in the wallet backing no other credit
 * (creditDeposit, under the wallet's lock); amountUsd must match the verified value within half a
 * cent. The
 * paymentId is claimed by a row with a unique key before the ledger credit (itself unique per ref
 * inside its transaction), so concurrent and repeated calls credit once: a repeat by the same user
 * returns the original result, by anyone else 409 payment_already_used. Refusals record nothing.
 */
export async function topup(
  {
    db,
    ledger,
    services,
    clock,
  }: { db: Kysely<Database>; ledger: Ledger; services: ChainServices; clock: Clock },
  { user, paymentId: rawPaymentId, source, amountUsd }: TopupParameters,
): Promise<TopupResult> {
  const claimedNano = usdToNano(amountUsd);
  if (claimedNano === null) {
    throw new ApiError('invalid_request', 'amountUsd must be a non-negative number.', { param: 'amountUsd' });
  }
  const paymentId = rawPaymentId.toLowerCase();
  const previous = await replayPayment({ db, clock }, { userId: user.id, paymentId });
  if (previous) return previous;

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
    const { balanceNano } = await ledger.balance(user.id);
    return {
      status: 'pending',
      paymentId,
      source,
      amount: verified.amount === null ? null : formatAmount(source, verified.amount),
      creditedUsd: 0,
      balance: nanoToUsd(balanceNano),
    };
  }
  // Only value from outside the service's wallets is a deposit.
  const amount = await depositAmount({ db, services }, verified.transfers);
  const creditedNano = pricePayment(source, amount, services.nativeUsdPriceNano);
  const difference = claimedNano > creditedNano ? claimedNano - creditedNano : creditedNano - claimedNano;
  if (difference > AMOUNT_TOLERANCE_NANO) {
    throw new ApiError(
      'amount_mismatch',
      `The transaction paid ${formatAmount(source, amount)} ${source}, worth ${nanoToUsd(creditedNano)} USD, not ${amountUsd}.`,
      { param: 'amountUsd' },
    );
  }
  if (creditedNano === 0n) {
    throw new ApiError('invalid_request', 'The payment is worth less than one nanousd.', {
      param: 'paymentId',
    });
  }
  return creditDeposit(
    { db, services, clock },
    {
      userId: user.id,
      proxyAddress: wallets.proxyAddress,
      paymentId,
      source,
      amount,
      creditedNano,
      blockNumber: verified.blockNumber,
    },
  );
}

function formatAmount(source: PaymentSource, amount: bigint): string {
  return formatUnits(amount, source === 'native' ? NATIVE_DECIMALS : STABLE_DECIMALS);
}
