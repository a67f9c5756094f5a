import type { Kysely } from 'kysely';
import type { Address } from 'viem';
import type { ChainServices } from '../chain/create-chain-services.js';
import type { Database } from '../db/schema.js';
import { requirePool } from './pool-transfers.js';
import { type StakeView, stakeView } from './stake-view.js';
import { formatTokenAmount } from './token-amount.js';

/**
 * The public stake record of a wallet (its connected address, checksummed), read from the staking
 * pool at the latest block: quantity, tier and claimable rewards, the amounts still unbonding with
 * their release times, and where anyone can check it without the coordinator — the pool's address
 * and the account that holds the position there (the wallet's proxy wallet). Unknown wallets have
 * nothing staked.
 */
export async function getStake(
  db: Kysely<Database>,
  services: ChainServices,
  address: string,
): Promise<{
  stake: StakeView;
  unbonding: { amount: string; releaseAt: string }[];
  pool: { address: Address; account: Address | null };
}> {
  const pool = requirePool(services);
  const row = await db
    .selectFrom('users as u')
    .innerJoin('wallets as w', 'w.user_id', 'u.id')
    .select('w.proxy_address')
    .where('u.address', '=', address)
    .executeTakeFirst();
  if (!row)
    return {
      stake: stakeView(services, null),
      unbonding: [],
      pool: { address: pool.address, account: null },
    };
  const account = row.proxy_address as Address;
  const [position, unbondings] = await Promise.all([pool.position(account), pool.unbondings(account)]);
  return {
    stake: stakeView(services, position),
    unbonding: unbondings.map((u) => ({
      amount: formatTokenAmount(u.amount, services.nativeSymbol),
      releaseAt: new Date(Number(u.releaseAtS) * 1000).toISOString(),
    })),
    pool: { address: pool.address, account },
  };
}
