import type { Hex } from 'viem';
import { ApiError } from '../errors.js';
import { getWallets } from '../wallets/get-wallets.js';
import { callPool } from './call-pool.js';
import { POOL_PURPOSES, requirePool } from './pool-transfers.js';
import { type StakeView, stakeView } from './stake-view.js';
import type { StakingDeps } from './staking-deps.js';
import { formatTokenAmount } from './token-amount.js';

export type UnbondingView = { id: string; amount: string; releaseAt: string };

/**
 * Unstakes: the proxy wallet calls the pool's `requestUnbond(amount)` through the transfer outbox;
 * the quantity, the tier and the reward rate drop at once, and the pool releases the amount after
 * its unbonding period (releaseUnbonded calls `withdraw()` then). More than the pool's staked
 * quantity: 400 exceeds_stake, nothing sent.
 */
export async function unstake(
  deps: StakingDeps,
  { user, amountWei }: { user: { id: string; address: string }; amountWei: bigint },
): Promise<{ txId: Hex; unbonding: UnbondingView; stake: StakeView }> {
  const { db, services } = deps;
  const pool = requirePool(services);
  if (amountWei <= 0n)
    throw new ApiError('invalid_request', 'The amount must be positive.', { param: 'params.1' });
  const wallets = await getWallets(db, user.id);
  if (!wallets) throw new ApiError('not_found', 'This user has no proxy wallet yet.');
  const before = await pool.position(wallets.proxyAddress);
  if (before.staked < amountWei) {
    throw new ApiError(
      'exceeds_stake',
      `Only ${formatTokenAmount(before.staked, services.nativeSymbol)} is staked.`,
      { param: 'params.1' },
    );
  }
  const { transfer, proxy } = await callPool(deps, {
    user,
    purpose: POOL_PURPOSES.unbond,
    call: { fn: 'requestUnbond', amount: amountWei },
  });
  const row = await db
    .selectFrom('unbondings')
    .select(['id', 'amount_wei', 'release_at'])
    .where('id', 'like', `${transfer.tx_hash}:%`)
    .executeTakeFirstOrThrow();
  return {
    txId: transfer.tx_hash as Hex,
    unbonding: {
      id: row.id,
      amount: formatTokenAmount(BigInt(row.amount_wei), services.nativeSymbol),
      releaseAt: new Date(Number(row.release_at)).toISOString(),
    },
    stake: stakeView(services, await pool.position(proxy)),
  };
}
