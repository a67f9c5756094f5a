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
import { sendTransaction } from '../chain/send-transaction.js';
import { spendableBalance } from '../chain/spendable-balance.js';
import { toBigInt } from '../db/bigint.js';
import { ApiError } from '../errors.js';
import { MAX_STORED_NANO } from '../ledger/money.js';
import type { StakingDeps } from '../staking/stake.js';
import { pricePayment } from '../topup/price-payment.js';
import { findManagedAddresses } from '../wallets/find-managed-addresses.js';
import { loadProxyAccount } from '../wallets/load-proxy-account.js';

/** The window the daily withdrawal limit sums over. */
export const WITHDRAW_WINDOW_MS = 24 * 60 * 60 * 1000;

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
 * what backs no credit too), and at most `withdrawDailyLimitNano` USD worth per user in any 24 hours. Every well-formed
 * attempt is recorded in `withdrawals`: refused (over a limit, with the code), or sending → sent |
 * failed (with the hash or the error code).
 */
export async function withdraw(
  { db, services, keyring, clock }: StakingDeps,
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
  const account = await loadProxyAccount(db, keyring, user.id);
  const id = randomUUID();
  let recorded = false;
  let broadcast = false;
  try {
    const { hash } = await sendTransaction(services.context, {
      account,
      ...(tokenAddress
        ? {
            to: tokenAddress,
            data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [recipient, units] }),
          }
        : { to: recipient, value: units }),
      gas: tokenAddress ? STABLE_TRANSFER_GAS : NATIVE_TRANSFER_GAS,
      param: 'amount',
      // Inside the wallet's queue and lock (shared by every replica): the limit and balance checks
      // cannot race another send of this wallet, nor a top-up crediting it.
      precheck: async ({ feeWei }) => {
        const nowMs = clock.now();
        const recent = await db
          .selectFrom('withdrawals')
          .select('usd_nano')
          .where('user_id', '=', user.id)
          .where('status', 'in', ['sending', 'sent'])
          .where('created_at', '>', nowMs - WITHDRAW_WINDOW_MS)
          .execute();
        const used = recent.reduce((sum, row) => sum + toBigInt(row.usd_nano), 0n);
        let refusal: ApiError | undefined;
        if (used + usdNano > services.withdrawDailyLimitNano) {
          refusal = new ApiError('withdraw_limit_exceeded', undefined, {
            param: 'amount',
            retryAfterS: 3600,
          });
        } else {
          // The gas is paid in native token, from what backs no credit, like the amount itself.
          const spendable = (token: PaymentSource) =>
            spendableBalance(db, services, { userId: user.id, proxyAddress: account.address, token });
          const covered =
            source === 'native'
              ? (await spendable('native')) >= units + feeWei
              : (await spendable(source)) >= units && (await spendable('native')) >= feeWei;
          if (!covered) refusal = new ApiError('insufficient_funds', undefined, { param: 'amount' });
        }
        await db
          .insertInto('withdrawals')
          .values({
            id,
            user_id: user.id,
            to_address: recipient,
            token: source,
            amount: units.toString(),
            usd_nano: usdNano,
            status: refusal ? 'refused' : 'sending',
            tx_hash: null,
            error_code: refusal?.code ?? null,
            created_at: nowMs,
          })
          .execute();
        if (refusal) throw refusal;
        recorded = true;
      },
      onBroadcast: async (hash) => {
        broadcast = true;
        await db.updateTable('withdrawals').set({ tx_hash: hash }).where('id', '=', id).execute();
      },
    });
    await db.updateTable('withdrawals').set({ status: 'sent', tx_hash: hash }).where('id', '=', id).execute();
    return { id, status: 'sent', txId: hash, to: recipient, token: source, amount };
  } catch (error) {
    // Broadcast but unconfirmed stays 'sending' (it may still be mined, and it counts to the limit).
    if (recorded && !broadcast) {
      const code = error instanceof ApiError ? error.code : 'internal_error';
      await db
        .updateTable('withdrawals')
        .set({ status: 'failed', error_code: code })
        .where('id', '=', id)
        .execute();
    }
    throw error;
  }
}
