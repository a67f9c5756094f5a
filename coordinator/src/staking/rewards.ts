/**
 * Reward arithmetic (pure, exact integers). Rewards are simple interest, accrued every second:
 *   reward = quantity × baseApyBps/10⁴ × multiplierBps/10⁴ × seconds / SECONDS_PER_YEAR.
 * A global reward index grows by baseApyBps every second (`rewardIndexAt`), so settling one position
 * is O(1) whatever happened to the others. A position keeps its accrued reward scaled by
 * REWARD_SCALE (no division until payout), so no fraction of a wei is ever lost to rounding.
 */

/** A year of 365 days. */
export const SECONDS_PER_YEAR = 31_536_000n;

/** Basis points per unit. */
export const BPS = 10_000n;

/** accruedScaled / REWARD_SCALE = claimable wei. */
export const REWARD_SCALE = BPS * BPS * SECONDS_PER_YEAR;

/** The global index: its value at `atS` (unix seconds) and the APY it has grown at since. */
export type RewardIndex = { readonly value: bigint; readonly atS: bigint; readonly apyBps: bigint };

/** One staker's position, as stored. */
export type StakePosition = {
  readonly quantityWei: bigint;
  readonly multiplierBps: bigint;
  /** The global index value up to which accruedScaled is settled. */
  readonly indexSnapshot: bigint;
  /** Accrued, unpaid rewards × REWARD_SCALE. */
  readonly accruedScaled: bigint;
};

/** The index value at `nowS` (never moves backwards if the clock does). */
export function rewardIndexAt(index: RewardIndex, nowS: bigint): bigint {
  return nowS > index.atS ? index.value + index.apyBps * (nowS - index.atS) : index.value;
}

/** Re-anchors the index at `nowS` with a new APY (APY changes apply from that second on). */
export function checkpointRewardIndex(index: RewardIndex, nowS: bigint, apyBps: bigint): RewardIndex {
  return { value: rewardIndexAt(index, nowS), atS: nowS > index.atS ? nowS : index.atS, apyBps };
}

/** Accrues everything earned up to `indexValue` into the position (call before any change to it). */
export function settlePosition<P extends StakePosition>(position: P, indexValue: bigint): P {
  const delta = indexValue > position.indexSnapshot ? indexValue - position.indexSnapshot : 0n;
  return {
    ...position,
    indexSnapshot: indexValue > position.indexSnapshot ? indexValue : position.indexSnapshot,
    accruedScaled: position.accruedScaled + position.quantityWei * delta * position.multiplierBps,
  };
}

/** Whole wei the position may claim. */
export function claimableWei(position: StakePosition): bigint {
  return position.accruedScaled / REWARD_SCALE;
}
