import { describe, expect, test } from 'vitest';
import { computeCost } from './charges.js';

describe('computeCost', () => {
  test('default: exact integers for known token counts', () => {
    // 1,000 prompt tokens at $0.10/M and 500 completion at $0.20/M = $0.0001 + $0.0001 = 200,000 nanousd.
    expect(
      computeCost({
        promptTokens: 1000,
        completionTokens: 500,
        priceInNano: 100_000_000n,
        priceOutNano: 200_000_000n,
        feeBps: 500,
      }),
    ).toEqual({
      providerNano: 200_000n,
      feeNano: 10_000n,
      totalNano: 210_000n,
    });
  });

  test('behavior: fractions of a nanousd round up, once', () => {
    // 3 tokens at 1 nanousd per million = 0.000003 nanousd → 1.
    expect(
      computeCost({ promptTokens: 3, completionTokens: 0, priceInNano: 1n, priceOutNano: 1n, feeBps: 500 }),
    ).toEqual({
      providerNano: 1n,
      feeNano: 1n,
      totalNano: 2n,
    });
    expect(
      computeCost({ promptTokens: 0, completionTokens: 0, priceInNano: 5n, priceOutNano: 5n, feeBps: 500 })
        .totalNano,
    ).toBe(0n);
  });
});
