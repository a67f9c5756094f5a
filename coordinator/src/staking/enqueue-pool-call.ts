import type { Kysely } from 'kysely';
import type { Address } from 'viem';
import { enqueueTransfer } from '../chain/enqueue-transfer.js';
import { POOL_GAS, type PoolCall, StakingPool } from '../chain/staking-pool.js';
import type { Database } from '../db/schema.js';
import type { PoolPurpose } from './pool-transfers.js';

/**
 * Inside the use's transaction: records a call of the staking pool for the transfer outbox (its
 * calldata, its fixed gas limit, the native value it carries). Returns the transfer's id.
 */
export function enqueuePoolCall(
  trx: Kysely<Database>,
  {
    purpose,
    ref,
    from,
    pool,
    call,
    valueWei = 0n,
    now,
  }: {
    purpose: PoolPurpose;
    ref: string;
    from: Address;
    pool: Pick<StakingPool, 'address'>;
    call: PoolCall;
    valueWei?: bigint;
    now: number;
  },
): Promise<string> {
  return enqueueTransfer(trx, {
    purpose,
    ref,
    from,
    to: pool.address,
    valueWei,
    data: StakingPool.encode(call),
    gas: POOL_GAS[call.fn],
    asset: 'native',
    amount: valueWei,
    now,
  });
}
