import { randomUUID } from 'node:crypto';
import {
  type Address,
  encodeFunctionData,
  erc20Abi,
  getAddress,
  type Hex,
  isAddress,
  parseUnits,
} from 'viem';
import {
  NATIVE_DECIMALS,
  NATIVE_TRANSFER_GAS,
  PAYMENT_SOURCES,
  type PaymentSource,
  STABLE_DECIMALS,
  STABLE_TRANSFER_GAS,
} from '../chain/constants.js';
import { enqueueTransfer } from '../chain/enqueue-transfer.js';
import type { TransferOutbox } from '../chain/transfer-outbox.js';
import { TRANSFER_STATUS, WITHDRAWAL_STATUS } from '../db/tables/chain.js';
import { ApiError } from '../errors.js';
import { MAX_STORED_NANO } from '../ledger/money.js';
import type { StakingDeps } from '../staking/staking-deps.js';
import { pricePayment } from '../topup/price-payment.js';
import { findManagedAddresses } from '../wallets/find-managed-addresses.js';
import { getWallets } from '../wallets/get-wallets.js';
import { WITHDRAW_PURPOSE } from './withdraw-transfers.js';

export type WithdrawDeps = Omit<StakingDeps, 'keyring'> & {
  /** The outbox, with withdrawTransfers registered for 'withdraw'. */
  outbox: TransferOutbox;
};

const AMOUNT_PATTERN = /^(0|[1-9][0-9]{0,30})(\.[0-9]+)?$/;

export type WithdrawParameters = {
  user: { id: string };
  to: string;
  token: string;
  /** Decimal string in whole tokens, at most the token's decimals ("12.5"). */
  amount: string;
};

export type WithdrawResult = {
  id: string;
  status: 'sent';
  txId: Hex;
  to: Address;
  token: PaymentSource;
  amount: string;
};

/**
 * Sends native token or a stable from the user's proxy wallet to an address outside the service
 * (never to a proxy wallet or vault: recipient_not_allowed). Limits: only what the wallet may
 * spend (credited top-ups stay, they back the credits; the gas, in native token, comes out of
 * what backs no credit too), and at most `withdrawDailyLimitNano` USD worth per user in any 24
 * hours. The send goes through the transfer outbox: the withdrawal is recorded `queued` with its
 * transfer in one transaction; in the wallet's queue the limits are checked (refused, with the
 * code, or sending); the transfer's end settles it — sent | failed (withdraw-transfers.ts).
 */
export async function withdraw(
  { db, services, clock, outbox }: WithdrawDeps,
  { user, to, token, amount }: WithdrawParameters,
): Promise<WithdrawResult> {
  if (typeof to !== 'string' || !isAddress(to, { strict: false })) {
    throw new ApiError('invalid_request', 'to must be an EVM address.', { param: 'to' });
  }
  if (!(PAYMENT_SOURCES as readonly string[]).includes(token)) {
    throw new ApiError('invalid_request', `token must be one of ${PAYMENT_SOURCES.join(', ')}.`, {
      param: 'token',
    });
  }
  const source = token as PaymentSource;
  const decimals = source === 'native' ? NATIVE_DECIMALS : STABLE_DECIMALS;
  const match = AMOUNT_PATTERN.exec(amount);
  if (!match || (match[2]?.length ?? 0) - 1 > decimals) {
    throw new ApiError(
      'invalid_request',
      `amount must be a decimal string with at most ${decimals} decimals.`,
      {
        param: 'amount',
      },
    );
  }
  const units = parseUnits(amount, decimals);
  if (units <= 0n) throw new ApiError('invalid_request', 'amount must be positive.', { param: 'amount' });
  const tokenAddress = source === 'native' ? undefined : services.tokens[source];
  if (source !== 'native' && !tokenAddress) {
    throw new ApiError('invalid_request', `${source} is not configured here.`, { param: 'token' });
  }
  const recipient = getAddress(to);
  // Tokens sent to a wallet of ours would come back as a "deposit" there: refused outright.
  if ((await findManagedAddresses(db, services, [recipient])).size > 0) {
    throw new ApiError('recipient_not_allowed', undefined, { param: 'to' });
  }
  const usdNano = pricePayment(source, units, services.nativeUsdPriceNano);
  if (usdNano > MAX_STORED_NANO) {
    throw new ApiError('invalid_request', 'amount is out of range.', { param: 'amount' });
  }
  const wallets = await getWallets(db, user.id);
  if (!wallets) throw new ApiError('not_found', 'This user has no proxy wallet yet.');
  const id = randomUUID();
  const transferId = await db.transaction().execute(async (trx) => {
    const nowMs = clock.now();
    await trx
      .insertInto('withdrawals')
      .values({
        id,
        user_id: user.id,
        to_address: recipient,
        token: source,
        amount: units.toString(),
        usd_nano: usdNano,
        status: WITHDRAWAL_STATUS.queued,
        tx_hash: null,
        error_code: null,
        created_at: nowMs,
      })
      .execute();
    return enqueueTransfer(trx, {
      purpose: WITHDRAW_PURPOSE,
      ref: id,
      from: wallets.proxyAddress,
      ...(tokenAddress
        ? {
            to: tokenAddress,
            data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [recipient, units] }),
            gas: STABLE_TRANSFER_GAS,
          }
        : { to: recipient, valueWei: units, gas: NATIVE_TRANSFER_GAS }),
      asset: tokenAddress ?? 'native',
      amount: units,
      now: nowMs,
    });
  });
  const { transfer, error } = await outbox.process(transferId);
  // Broadcast but unconfirmed stays 'sending' (it may still be mined, and it counts to the limit):
  // the sweep finishes it. Refused, failed, or never stored: the error says why.
  if (transfer.status !== TRANSFER_STATUS.mined) throw error ?? new ApiError('chain_unavailable');
  return { id, status: 'sent', txId: transfer.tx_hash as Hex, to: recipient, token: source, amount };
}
