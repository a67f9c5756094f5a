import { describe, expect, test } from 'vitest';
import {
  DEFAULT_TIER_THRESHOLDS_WEI,
  grantScopes,
  TIER_BENEFITS,
  TIER_NAMES,
  tierForStake,
} from './tiers.js';

const token = 10n ** 18n;

describe('tierForStake', () => {
  test('default', () => {
    expect(tierForStake(0n)).toBe('none');
    expect(tierForStake(100n * token - 1n)).toBe('none');
    expect(tierForStake(100n * token)).toBe('basic');
    expect(tierForStake(1_000n * token)).toBe('silver');
    expect(tierForStake(10_000n * token)).toBe('gold');
    expect(tierForStake(100_000n * token)).toBe('platinum');
  });

  test('behavior: thresholds are configurable', () => {
    const thresholds = { ...DEFAULT_TIER_THRESHOLDS_WEI, basic: 1n };
    expect(tierForStake(1n, thresholds)).toBe('basic');
  });

  test('behavior: higher tiers never unlock less', () => {
    for (let i = 1; i < TIER_NAMES.length; i++) {
      const lower = TIER_BENEFITS[TIER_NAMES[i - 1]!];
      const higher = TIER_BENEFITS[TIER_NAMES[i]!];
      expect(higher.maxConcurrency).toBeGreaterThan(lower.maxConcurrency);
      expect(higher.routingPriority).toBeGreaterThan(lower.routingPriority);
      for (const scope of lower.scopes) expect(higher.scopes).toContain(scope);
    }
  });
});

describe('grantScopes', () => {
  test('default', () => {
    expect(grantScopes('none', ['infer.chat', 'infer.vision', 'relay', 'infer.chat'])).toEqual([
      'infer.chat',
    ]);
    expect(grantScopes('silver', ['relay'])).toEqual(['relay']);
  });
});
