import type { Kysely } from 'kysely';
import { type Address, formatUnits } from 'viem';
import { NATIVE_DECIMALS, type PaymentSource, STABLE_DECIMALS } from '../chain/constants.js';
import type { ChainServices } from '../chain/create-chain-services.js';
import { spendableBalance } from '../chain/spendable-balance.js';
import type { Clock } from '../clock.js';
import type { Database } from '../db/schema.js';
import { ApiError } from '../errors.js';
import { creditPayment, replayPayment, type TopupResult } from './credit-payment.js';

export type CreditDepositDeps = { db: Kysely<Database>; services: ChainServices; clock: Clock };

export type CreditDepositParameters = {
  userId: string;
  proxyAddress: Address;
  /** The transaction hash, lowercase. */
  paymentId: string;
  source: PaymentSource;
  /** The deposit's value from outside (see depositAmount), smallest unit. */
  amount: bigint;
  creditedNano: bigint;
  blockNumber: bigint;
};

/**
 * Credits a deposit only while its tokens are still in the proxy wallet and backing nothing else:
 * inside the wallet's signer queue (its lock, shared by every replica), the wallet's on-chain
 * balance less what is already credited must cover the deposit. A deposit withdrawn or staked
 * before its top-up, or one whose tokens another top-up already stands on, credits nothing
 * (payment_spent). A paymentId credited before answers as a repeat, whatever the balance now.
 */
export async function creditDeposit(
  { db, services, clock }: CreditDepositDeps,
  parameters: CreditDepositParameters,
): Promise<TopupResult> {
  const { userId, proxyAddress, paymentId, source, amount } = parameters;
  return services.context.queue.run(proxyAddress, async () => {
    const previous = await replayPayment({ db, clock }, { userId, paymentId });
    if (previous) return previous;
    const free = await spendableBalance(db, services, { userId, proxyAddress, token: source });
    if (free < amount) {
      const decimals = source === 'native' ? NATIVE_DECIMALS : STABLE_DECIMALS;
      throw new ApiError(
        'payment_spent',
        `This payment brought ${formatUnits(amount, decimals)} ${source}, but only ${formatUnits(free, decimals)} ${source} in your proxy wallet back no credit now (withdrawn, staked or already credited).`,
        { param: 'paymentId' },
      );
    }
    return creditPayment({ db, clock }, parameters);
  });
}
