import type { Scope } from './scopes.js';

/** The tier ladder, lowest first. A node's tier comes from its owner's stake of the native token. */
export const TIER_NAMES = ['none', 'basic', 'silver', 'gold', 'platinum'] as const;
export type TierName = (typeof TIER_NAMES)[number];

/** Stake (wei) needed to reach each tier; `none` is everything below `basic`. */
export type TierThresholds = Readonly<Record<Exclude<TierName, 'none'>, bigint>>;

const WEI_PER_TOKEN = 10n ** 18n;

/** Default thresholds: basic ≥ 100, silver ≥ 1,000, gold ≥ 10,000, platinum ≥ 100,000 tokens. */
export const DEFAULT_TIER_THRESHOLDS_WEI: TierThresholds = Object.freeze({
  basic: 100n * WEI_PER_TOKEN,
  silver: 1_000n * WEI_PER_TOKEN,
  gold: 10_000n * WEI_PER_TOKEN,
  platinum: 100_000n * WEI_PER_TOKEN,
});

/** What a tier unlocks. */
export type TierBenefits = {
  /** Scopes a node of this tier may claim. */
  readonly scopes: readonly Scope[];
  /** Most jobs the coordinator routes to the node at once (the node's own capacity may be lower). */
  readonly maxConcurrency: number;
  /** Routing preference among equally cheap nodes: higher wins. */
  readonly routingPriority: number;
};

const INFER_BASE: readonly Scope[] = ['infer.chat', 'infer.text', 'infer.embed'];
const INFER_ALL: readonly Scope[] = [...INFER_BASE, 'infer.vision', 'infer.voice'];

/** What each tier unlocks. */
export const TIER_BENEFITS: Readonly<Record<TierName, TierBenefits>> = Object.freeze({
  none: { scopes: INFER_BASE, maxConcurrency: 1, routingPriority: 0 },
  basic: { scopes: INFER_ALL, maxConcurrency: 4, routingPriority: 1 },
  silver: { scopes: [...INFER_ALL, 'relay', 'verify'], maxConcurrency: 8, routingPriority: 2 },
  gold: { scopes: [...INFER_ALL, 'relay', 'verify'], maxConcurrency: 16, routingPriority: 3 },
  platinum: { scopes: [...INFER_ALL, 'relay', 'verify'], maxConcurrency: 64, routingPriority: 4 },
});

/** The tier a stake (wei) reaches. */
export function tierForStake(
  stakeWei: bigint,
  thresholds: TierThresholds = DEFAULT_TIER_THRESHOLDS_WEI,
): TierName {
  if (stakeWei >= thresholds.platinum) return 'platinum';
  if (stakeWei >= thresholds.gold) return 'gold';
  if (stakeWei >= thresholds.silver) return 'silver';
  if (stakeWei >= thresholds.basic) return 'basic';
  return 'none';
}

/** The scopes of `claimed` that `tier` allows, in claim order. */
export function grantScopes(tier: TierName, claimed: readonly Scope[]): Scope[] {
  const allowed = TIER_BENEFITS[tier].scopes;
  return claimed.filter((scope, i) => allowed.includes(scope) && claimed.indexOf(scope) === i);
}
