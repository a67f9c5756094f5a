import { describe, expect, test } from 'vitest';
import { cacheSequences, MAX_CACHE_SEQUENCES } from './cache-sequences.js';

describe('cacheSequences', () => {
  test('default: as many sequences as the budget pays for', () => {
    expect(cacheSequences({ budgetBytes: 250, sequenceBytes: 100 })).toBe(2);
  });

  test('behavior: at most MAX_CACHE_SEQUENCES; none for a budget of 0 or below one sequence', () => {
    expect(cacheSequences({ budgetBytes: 10 ** 12, sequenceBytes: 100 })).toBe(MAX_CACHE_SEQUENCES);
    expect(cacheSequences({ budgetBytes: 0, sequenceBytes: 100 })).toBe(0);
    expect(cacheSequences({ budgetBytes: 99, sequenceBytes: 100 })).toBe(0);
    expect(cacheSequences({ budgetBytes: 1, sequenceBytes: 0 })).toBe(MAX_CACHE_SEQUENCES);
  });
});
