import type { Hex } from 'viem';
import { ApiError } from '../errors.js';
import { callPool } from './call-pool.js';
import { POOL_PURPOSES, requirePool } from './pool-transfers.js';
import { type StakeView, stakeView } from './stake-view.js';
import type { StakingDeps } from './staking-deps.js';

export type StakeParameters = { user: { id: string; address: string }; amountWei: bigint };

/**
 * Stakes native token: the user's proxy wallet calls the staking pool's `stake()` with the amount
 * (the position is the proxy wallet's in the pool), through the transfer outbox. Before signing, in
 * the wallet's queue, the wallet must be able to spend the amount plus the call's gas limit × 150
 * gwei from what backs no credit (else 400 insufficient_funds, nothing sent). Once mined, its
 * Staked event updates the ledger's view and tier. Returns the hash and the pool's position.
 */
export async function stake(
  deps: StakingDeps,
  { user, amountWei }: StakeParameters,
): Promise<{ txId: Hex; stake: StakeView }> {
  const pool = requirePool(deps.services);
  if (amountWei <= 0n)
    throw new ApiError('invalid_request', 'The amount must be positive.', { param: 'params.1' });
  const { transfer, proxy } = await callPool(deps, {
    user,
    purpose: POOL_PURPOSES.stake,
    call: { fn: 'stake' },
    valueWei: amountWei,
  });
  return { txId: transfer.tx_hash as Hex, stake: stakeView(deps.services, await pool.position(proxy)) };
}
