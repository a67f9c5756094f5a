import type { Address } from 'viem';
import type { PoolCall } from '../chain/staking-pool.js';
import type { TransferRow } from '../chain/transfer-types.js';
import { TRANSFER_STATUS } from '../db/tables/chain.js';
import { ApiError } from '../errors.js';
import { getWallets } from '../wallets/get-wallets.js';
import { enqueuePoolCall } from './enqueue-pool-call.js';
import { type PoolPurpose, requirePool } from './pool-transfers.js';
import type { StakingDeps } from './staking-deps.js';

/**
 * Sends one call of the staking pool from the user's proxy wallet through the transfer outbox and
 * waits for it: the mined transfer (its events already applied to the ledger's view), or the error
 * — a refusal before signing (nothing sent: the pool would have refused, or the wallet cannot
 * pay), a revert, or a transaction still unconfirmed, which the outbox's sweep finishes.
 */
export async function callPool(
  { db, services, clock, outbox }: StakingDeps,
  {
    user,
    purpose,
    call,
    valueWei = 0n,
  }: { user: { id: string }; purpose: PoolPurpose; call: PoolCall; valueWei?: bigint },
): Promise<{ transfer: TransferRow; proxy: Address }> {
  const pool = requirePool(services);
  // Read once and kept: the end of the call reads the ladder inside its database transaction.
  await pool.parameters();
  const wallets = await getWallets(db, user.id);
  if (!wallets) throw new ApiError('not_found', 'This user has no proxy wallet yet.');
  const transferId = await enqueuePoolCall(db, {
    purpose,
    ref: user.id,
    from: wallets.proxyAddress,
    pool,
    call,
    valueWei,
    now: clock.now(),
  });
  const { transfer, error } = await outbox.process(transferId);
  if (transfer.status !== TRANSFER_STATUS.mined) {
    throw (
      error ??
      new ApiError('chain_unavailable', `Transaction ${transfer.tx_hash ?? ''} is not mined yet; it will be.`)
    );
  }
  return { transfer, proxy: wallets.proxyAddress };
}
