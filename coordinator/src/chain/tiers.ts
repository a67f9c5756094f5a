/** One rung of the ladder: the least stake (wei) that reaches it and its reward multiplier (bps). */
export type Tier = { readonly name: string; readonly minStakeWei: bigint; readonly multiplierBps: number };

const WEI_PER_TOKEN = 10n ** 18n;

/**
 * The default ladder (design.md): none < 100, basic ≥ 100, silver ≥ 1,000, gold ≥ 10,000,
 * platinum ≥ 100,000 tokens staked; multipliers 1.0 / 1.0 / 1.1 / 1.25 / 1.5.
 */
export const DEFAULT_TIERS: readonly Tier[] = Object.freeze([
  { name: 'none', minStakeWei: 0n, multiplierBps: 10_000 },
  { name: 'basic', minStakeWei: 100n * WEI_PER_TOKEN, multiplierBps: 10_000 },
  { name: 'silver', minStakeWei: 1_000n * WEI_PER_TOKEN, multiplierBps: 11_000 },
  { name: 'gold', minStakeWei: 10_000n * WEI_PER_TOKEN, multiplierBps: 12_500 },
  { name: 'platinum', minStakeWei: 100_000n * WEI_PER_TOKEN, multiplierBps: 15_000 },
]);

/** Default base APY: 5% (basis points). */
export const DEFAULT_BASE_APY_BPS = 500;

/** The ladder from configuration (`minStake` in whole tokens), sorted by threshold. */
export function tiersFromConfig(
  tiers: readonly { name: string; minStake: number; multiplierBps: number }[],
  decimals = 18,
): Tier[] {
  const unit = 10n ** BigInt(decimals);
  const ladder = tiers
    .map((t) => ({ name: t.name, minStakeWei: BigInt(t.minStake) * unit, multiplierBps: t.multiplierBps }))
    .sort((a, b) => (a.minStakeWei < b.minStakeWei ? -1 : a.minStakeWei > b.minStakeWei ? 1 : 0));
  if (ladder.length === 0 || ladder[0]!.minStakeWei !== 0n) {
    ladder.unshift({ name: 'none', minStakeWei: 0n, multiplierBps: 10_000 });
  }
  return ladder;
}

/** The highest tier whose threshold `quantityWei` reaches. `tiers` is sorted, lowest first. */
export function tierFor(quantityWei: bigint, tiers: readonly Tier[] = DEFAULT_TIERS): Tier {
  let reached = tiers[0]!;
  for (const tier of tiers) if (quantityWei >= tier.minStakeWei) reached = tier;
  return reached;
}
