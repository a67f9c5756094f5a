import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Hex } from 'viem';
import { NATIVE_TRANSFER_GAS } from '../chain/constants.js';
import type { ChainServices } from '../chain/create-chain-services.js';
import { sendTransaction } from '../chain/send-transaction.js';
import { spendableBalance } from '../chain/spendable-balance.js';
import type { Clock } from '../clock.js';
import type { Database } from '../db/schema.js';
import { ApiError } from '../errors.js';
import type { Keyring } from '../wallets/keyring.js';
import { loadProxyAccount } from '../wallets/load-proxy-account.js';
import { currentRewardIndex, lockPosition, savePosition, toSeconds } from './position-store.js';
import { settlePosition } from './rewards.js';
import { type StakeView, stakeView } from './stake-view.js';
import { formatTokenAmount } from './token-amount.js';

export type StakingDeps = {
  db: Kysely<Database>;
  services: ChainServices;
  keyring: Keyring;
  clock: Clock;
};

export type StakeParameters = { user: { id: string; address: string }; amountWei: bigint };

/**
 * Stakes native token: a real transfer from the user's proxy wallet to the staking vault, then —
 * only when that transaction succeeded — the stake ledger records it with its hash, after settling
 * the pending rewards at the old quantity (they are kept). The proxy wallet pays the gas
 * (21,000 × 150 gwei) on top of the amount.
 */
export async function stake(
  { db, services, keyring, clock }: StakingDeps,
  { user, amountWei }: StakeParameters,
): Promise<{ txId: Hex; stake: StakeView }> {
  const vault = services.stakingVault;
  if (!vault) throw new ApiError('chain_unavailable', 'Staking is not configured on this coordinator.');
  if (amountWei <= 0n)
    throw new ApiError('invalid_request', 'The amount must be positive.', { param: 'params.1' });
  const account = await loadProxyAccount(db, keyring, user.id);
  const { hash } = await sendTransaction(services.context, {
    account,
    to: vault.address,
    value: amountWei,
    gas: NATIVE_TRANSFER_GAS,
    param: 'params.1',
    precheck: async ({ feeWei }) => {
      const spendable = await spendableBalance(db, services, {
        userId: user.id,
        proxyAddress: account.address,
        token: 'native',
      });
      if (spendable < amountWei + feeWei) {
        throw new ApiError(
          'insufficient_funds',
          `The proxy wallet can spend ${formatTokenAmount(spendable, services.nativeSymbol)}; staking needs the amount plus ${formatTokenAmount(feeWei, services.nativeSymbol)} gas.`,
          { param: 'params.1' },
        );
      }
    },
  });
  const position = await db.transaction().execute(async (trx) => {
    const nowMs = clock.now();
    const index = await currentRewardIndex(trx, services, toSeconds(nowMs));
    const settled = settlePosition(await lockPosition(trx, services, user, index, nowMs), index);
    const saved = await savePosition(
      trx,
      services,
      { ...settled, quantityWei: settled.quantityWei + amountWei },
      nowMs,
    );
    await trx
      .insertInto('stake_events')
      .values({
        id: randomUUID(),
        user_id: user.id,
        kind: 'stake',
        amount_wei: amountWei.toString(),
        tx_hash: hash,
        created_at: nowMs,
      })
      .execute();
    return saved;
  });
  return { txId: hash, stake: stakeView(services, position, position.tier) };
}
