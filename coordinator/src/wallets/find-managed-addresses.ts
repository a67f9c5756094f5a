import type { Kysely } from 'kysely';
import { type Address, getAddress } from 'viem';
import type { ChainServices } from '../chain/create-chain-services.js';
import type { Database } from '../db/schema.js';

/**
 * Which of `addresses` are wallets this service holds keys for or pays from: any user's proxy
 * wallet, the staking vault, the rewards vault, the treasury, the staking pool. Tokens moving between such wallets are the
 * service's own bookkeeping, never a deposit from outside, so a top-up must not count them and a
 * withdrawal must not send to them (either would let one token back two credits).
 */
export async function findManagedAddresses(
  db: Kysely<Database>,
  services: Pick<ChainServices, 'stakingVault' | 'rewardsVault'> &
    Partial<Pick<ChainServices, 'treasury' | 'stakingPool'>>,
  addresses: readonly string[],
): Promise<Set<Address>> {
  const wanted = [...new Set(addresses.map((a) => getAddress(a)))];
  const managed = new Set<Address>();
  if (wanted.length === 0) return managed;
  for (const vault of [
    services.stakingVault,
    services.rewardsVault,
    services.treasury,
    services.stakingPool,
  ]) {
    if (vault && wanted.includes(vault.address)) managed.add(vault.address);
  }
  const proxies = await db
    .selectFrom('wallets')
    .select('proxy_address')
    .where('proxy_address', 'in', wanted)
    .execute();
  for (const row of proxies) managed.add(getAddress(row.proxy_address));
  return managed;
}
