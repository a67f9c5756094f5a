import { describe, expect, test } from 'vitest';
import { computeCost, priceBill, priceHold, pricesOf } from './price.js';

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

/** $1 in, $0.10 cached, $2 out per million tokens (nanousd per million). */
const PRICES = { inNano: 1_000_000_000n, cachedInNano: 100_000_000n, outNano: 2_000_000_000n };

describe('priceHold', () => {
  test('default: the worst case at the full input price, fee included', () => {
    expect(
      priceHold({
        prices: PRICES,
        promptTokensBound: 1000,
        completionTokensBound: 500,
        continuation: false,
        feeBps: 500,
      }),
    ).toBe(2_100_000n);
  });

  test('behavior: a continuing part holds no prompt; a free node holds one nanousd', () => {
    const base = { prices: PRICES, promptTokensBound: 1000, completionTokensBound: 500, feeBps: 500 };
    expect(priceHold({ ...base, continuation: true })).toBe(1_050_000n);
    const free = { inNano: 0n, cachedInNano: 0n, outNano: 0n };
    expect(priceHold({ ...base, prices: free, continuation: false })).toBe(1n);
  });
});

describe('priceBill', () => {
  const base = {
    prices: PRICES,
    counted: { promptTokens: 1000, completionTokens: 100 },
    continuation: false,
    feeBps: 0,
    heldNano: 10_000_000n,
  };

  test('default: cached tokens up to the bound at the cached price, the rest at the input price', () => {
    const bill = priceBill({ ...base, claimedCached: 800, cachedBound: 800 });
    // 200 × $1 + 800 × $0.10 + 100 × $2 = 200 + 80 + 200 µ$ = 480,000 nanousd.
    expect(bill).toMatchObject({ promptTokens: 1000, cachedTokens: 800, chargedNano: 480_000n });
    expect(bill.cacheDiscountNano).toBe(720_000n);
  });

  test('behavior: a claim over the coordinator bound is billed the bound', () => {
    const bill = priceBill({ ...base, claimedCached: 1000, cachedBound: 600 });
    expect(bill.cachedTokens).toBe(600);
    expect(bill.chargedNano).toBe(400_000n + 60_000n + 200_000n);
  });

  test('behavior: a claim can lower a bill, never raise it', () => {
    const none = priceBill({ ...base, claimedCached: 0, cachedBound: 800 });
    const some = priceBill({ ...base, claimedCached: 300, cachedBound: 800 });
    expect(none.cachedTokens).toBe(0);
    expect(none.chargedNano).toBe(1_200_000n);
    expect(some.chargedNano).toBeLessThan(none.chargedNano);
    for (const claimedCached of [-5, 1.5, '900', null, undefined, Number.NaN, 2 ** 60])
      expect(priceBill({ ...base, claimedCached, cachedBound: 800 }).chargedNano).toBeLessThanOrEqual(
        none.chargedNano,
      );
    expect(priceBill({ ...base, claimedCached: '900', cachedBound: 800 }).cachedTokens).toBe(0);
  });

  test('behavior: no bound (nothing sent before, or a completion) bills every token at the input price', () => {
    expect(priceBill({ ...base, claimedCached: 900, cachedBound: 0 })).toMatchObject({
      cachedTokens: 0,
      chargedNano: 1_200_000n,
      cacheDiscountNano: 0n,
    });
  });

  test('behavior: an offer without a cached price bills cached tokens at the input price', () => {
    const prices = pricesOf({ priceInNano: PRICES.inNano, priceOutNano: PRICES.outNano }, 'chat');
    expect(prices.cachedInNano).toBe(PRICES.inNano);
    const bill = priceBill({ ...base, prices, claimedCached: 800, cachedBound: 800 });
    expect(bill).toMatchObject({ cachedTokens: 800, chargedNano: 1_200_000n, cacheDiscountNano: 0n });
  });

  test('behavior: a continuing part bills no prompt, so nothing cached; the charge is capped at the hold', () => {
    expect(priceBill({ ...base, claimedCached: 800, cachedBound: 800, continuation: true })).toMatchObject({
      promptTokens: 0,
      cachedTokens: 0,
      chargedNano: 200_000n,
    });
    expect(priceBill({ ...base, claimedCached: 0, cachedBound: 0, heldNano: 5n }).chargedNano).toBe(5n);
  });
});
