import { describe, expect, test } from 'vitest';
import { tierSummary } from './tier-summary.js';

describe('tierSummary', () => {
  test('behavior: the cap per model now and what staking more unlocks', () => {
    expect(tierSummary('none')).toBe(
      'tier none (unstaked): at most 1 job at a time per model; the owner staking 100 tokens makes it basic (4 at a time)',
    );
    expect(tierSummary('gold')).toBe(
      'tier gold: at most 16 jobs at a time per model; the owner staking 100,000 tokens makes it platinum (64 at a time)',
    );
    expect(tierSummary('platinum')).toBe('tier platinum: at most 64 jobs at a time per model');
  });
});
