import { TIER_NAMES, type TierName } from '@gpumesh/protocol';
import { DEFAULT_TIER_THRESHOLDS_WEI, TIER_BENEFITS } from '@gpumesh/protocol/internal';

/**
 * What a node's tier means for it, in one line for the start log and `status`: how many jobs the
 * coordinator sends it at once per model, and what staking more would unlock (at the protocol's
 * default thresholds; a coordinator may set its own).
 */
export function tierSummary(tier: TierName): string {
  const cap = TIER_BENEFITS[tier].maxConcurrency;
  const now = `tier ${tier === 'none' ? 'none (unstaked)' : tier}: at most ${cap} job${cap === 1 ? '' : 's'} at a time per model`;
  const next = TIER_NAMES[TIER_NAMES.indexOf(tier) + 1];
  if (!next || next === 'none') return now;
  const stake = DEFAULT_TIER_THRESHOLDS_WEI[next] / 10n ** 18n;
  return `${now}; the owner staking ${stake.toLocaleString('en-US')} tokens makes it ${next} (${TIER_BENEFITS[next].maxConcurrency} at a time)`;
}
