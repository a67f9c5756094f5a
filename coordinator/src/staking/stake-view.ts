import type { ChainServices } from '../chain/create-chain-services.js';
import { claimableWei, type StakePosition } from './rewards.js';
import { formatTokenAmount } from './token-amount.js';

/** The stake record of the API: quantity and claimable as "N.NNNN SYMBOL", the tier's name. */
export type StakeView = { quantity: string; tier: string; claimable: string };

/** Formats a settled position as the API's stake record. */
export function stakeView(
  services: Pick<ChainServices, 'nativeSymbol'>,
  position: (StakePosition & { tier: string }) | null,
  fallbackTier: string,
): StakeView {
  return {
    quantity: formatTokenAmount(position?.quantityWei ?? 0n, services.nativeSymbol),
    tier: position?.tier ?? fallbackTier,
    claimable: formatTokenAmount(position ? claimableWei(position) : 0n, services.nativeSymbol),
  };
}
