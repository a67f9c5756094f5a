import fc from 'fast-check';
import { parseEther } from 'viem';
import { describe, expect, test } from 'vitest';
import { DEFAULT_BASE_APY_BPS, DEFAULT_TIERS, tierFor } from '../chain/tiers.js';
import {
  checkpointRewardIndex,
  claimableWei,
  REWARD_SCALE,
  type RewardIndex,
  rewardIndexAt,
  SECONDS_PER_YEAR,
  type StakePosition,
  settlePosition,
} from './rewards.js';

const start = 1_800_000_000n;
const index: RewardIndex = { value: 0n, atS: start, apyBps: BigInt(DEFAULT_BASE_APY_BPS) };

function open(quantityWei: bigint, at: bigint): StakePosition {
  return {
    quantityWei,
    multiplierBps: BigInt(tierFor(quantityWei).multiplierBps),
    indexSnapshot: rewardIndexAt(index, at),
    accruedScaled: 0n,
  };
}

describe('rewards', () => {
  test('default: a year of each tier pays quantity × 5% × multiplier to the last wei', () => {
    for (const [tokens, expected] of [
      ['100', '5'], // basic ×1.0
      ['1000', '55'], // silver ×1.1
      ['10000', '625'], // gold ×1.25
      ['100000', '7500'], // platinum ×1.5
      ['12.3456', '0.61728'], // none ×1.0
    ] as const) {
      const position = open(parseEther(tokens), start);
      const settled = settlePosition(position, rewardIndexAt(index, start + SECONDS_PER_YEAR));
      expect(claimableWei(settled)).toBe(parseEther(expected));
    }
  });

  test('behavior: accrues every second (simple interest, not compounded)', () => {
    const position = open(parseEther('100'), start);
    const oneSecond = claimableWei(settlePosition(position, rewardIndexAt(index, start + 1n)));
    expect(oneSecond).toBe((parseEther('100') * 500n) / (10_000n * SECONDS_PER_YEAR));
    const twoYears = settlePosition(position, rewardIndexAt(index, start + 2n * SECONDS_PER_YEAR));
    expect(claimableWei(twoYears)).toBe(parseEther('10'));
  });

  test('behavior: settling in many steps loses nothing to rounding', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 1n, max: 10n ** 24n }),
        fc.array(fc.bigInt({ min: 0n, max: 10_000_000n }), { minLength: 1, maxLength: 20 }),
        (quantityWei, steps) => {
          let position = open(quantityWei, start);
          let now = start;
          for (const step of steps) {
            now += step;
            position = settlePosition(position, rewardIndexAt(index, now));
          }
          const once = settlePosition(open(quantityWei, start), rewardIndexAt(index, now));
          expect(position.accruedScaled).toBe(once.accruedScaled);
        },
      ),
    );
  });

  test('behavior: an APY checkpoint applies the new rate from then on', () => {
    const half = checkpointRewardIndex(index, start + SECONDS_PER_YEAR / 2n, 1_000n);
    const value = rewardIndexAt(half, start + SECONDS_PER_YEAR);
    const position = settlePosition(open(parseEther('100'), start), value);
    expect(claimableWei(position)).toBe(parseEther('7.5')); // half a year at 5%, half at 10%
  });

  test('behavior: the index never moves backwards', () => {
    expect(rewardIndexAt(index, start - 10n)).toBe(0n);
    const later = rewardIndexAt(index, start + 10n);
    const position = settlePosition(settlePosition(open(1n, start), later), 0n);
    expect(position.indexSnapshot).toBe(later);
  });

  test('behavior: paying claimable leaves only the sub-wei remainder', () => {
    const position = settlePosition(open(parseEther('1.2345'), start), rewardIndexAt(index, start + 12_345n));
    const paid = claimableWei(position);
    const rest = position.accruedScaled - paid * REWARD_SCALE;
    expect(rest >= 0n && rest < REWARD_SCALE).toBe(true);
  });
});

describe('tierFor', () => {
  test('default: thresholds', () => {
    expect(tierFor(0n).name).toBe('none');
    expect(tierFor(parseEther('99.9999')).name).toBe('none');
    expect(tierFor(parseEther('100')).name).toBe('basic');
    expect(tierFor(parseEther('1000')).name).toBe('silver');
    expect(tierFor(parseEther('10000')).name).toBe('gold');
    expect(tierFor(parseEther('100000')).name).toBe('platinum');
    expect(DEFAULT_TIERS.map((t) => t.multiplierBps)).toEqual([10_000, 10_000, 11_000, 12_500, 15_000]);
  });
});
