import type { Hex } from 'viem';
import { ApiError } from '../errors.js';
import { getWallets } from '../wallets/get-wallets.js';
import { callPool } from './call-pool.js';
import { POOL_PURPOSES, requirePool } from './pool-transfers.js';
import { type StakeView, stakeView } from './stake-view.js';
import type { StakingDeps } from './staking-deps.js';
import { formatTokenAmount } from './token-amount.js';

/** The least a claim takes: one unit of the API's amounts (0.0001 token); less shows as nothing. */
export const MIN_CLAIM_WEI = 10n ** 14n;

/**
 * Claims the rewards the pool has accrued to the user's position (the base APY × its tier's
 * multiplier, per second), paid by the pool out of its rewards pool to the proxy wallet: the
 * proxy wallet calls `claim(amount)` through the transfer outbox, `amount` the claimable at the
 * latest block (rewards only grow until then) or, if less, what the rewards pool holds. Less than
 * 0.0001 claimable ("0.0000" in the API's view): 409 nothing_to_claim; an empty rewards pool: 409
 * rewards_pool_empty — nothing sent either way.
 */
export async function claim(
  deps: StakingDeps,
  { user }: { user: { id: string; address: string } },
): Promise<{ txId: Hex; claimed: string; stake: StakeView }> {
  const { db, services } = deps;
  const pool = requirePool(services);
  const wallets = await getWallets(db, user.id);
  if (!wallets) throw new ApiError('not_found', 'This user has no proxy wallet yet.');
  const [position, totals] = await Promise.all([pool.position(wallets.proxyAddress), pool.totals()]);
  if (position.claimable < MIN_CLAIM_WEI) throw new ApiError('nothing_to_claim');
  if (totals.rewardsPool === 0n) throw new ApiError('rewards_pool_empty');
  // biome-ignore lint/complexity/useMathMinMax: bigint (Math.min takes numbers)
  const amount = position.claimable < totals.rewardsPool ? position.claimable : totals.rewardsPool;
  const { transfer, proxy } = await callPool(deps, {
    user,
    purpose: POOL_PURPOSES.claim,
    call: { fn: 'claim', amount },
  });
  return {
    txId: transfer.tx_hash as Hex,
    claimed: formatTokenAmount(amount, services.nativeSymbol),
    stake: stakeView(services, await pool.position(proxy)),
  };
}
