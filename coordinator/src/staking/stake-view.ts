import type { ChainServices } from '../chain/create-chain-services.js';
import type { PoolPosition } from '../chain/staking-pool.js';
import { tierName } from './position-store.js';
import { formatTokenAmount } from './token-amount.js';

/** The stake record of the API: quantity and claimable as "N.NNNN SYMBOL", the tier's name. */
export type StakeView = { quantity: string; tier: string; claimable: string };

/** Formats a position the pool reported (none: nothing staked) as the API's stake record. */
export function stakeView(
  services: Pick<ChainServices, 'nativeSymbol' | 'tiers'>,
  position: Pick<PoolPosition, 'staked' | 'claimable' | 'tier'> | null,
): StakeView {
  return {
    quantity: formatTokenAmount(position?.staked ?? 0n, services.nativeSymbol),
    tier: tierName(position?.tier ?? 0, services.tiers),
    claimable: formatTokenAmount(position?.claimable ?? 0n, services.nativeSymbol),
  };
}
