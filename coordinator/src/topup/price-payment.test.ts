import { parseEther } from 'viem';
import { expect, test } from 'vitest';
import { nanoToUsd, pricePayment, usdToNano } from './price-payment.js';

test('default: stables are 1.0 USD, native at the configured price', () => {
  expect(pricePayment('USDC.s', 25_500_000n, 0n)).toBe(25_500_000_000n);
  expect(pricePayment('USD.s', 1n, 0n)).toBe(1_000n);
  expect(pricePayment('native', parseEther('2'), 2_500_000_000n)).toBe(5_000_000_000n);
  expect(pricePayment('native', 1n, 2_500_000_000n)).toBe(0n); // rounds down
});

test('behavior: client USD numbers convert exactly as written', () => {
  expect(usdToNano(25.5)).toBe(25_500_000_000n);
  expect(usdToNano(0.1)).toBe(100_000_000n);
  expect(usdToNano(0)).toBe(0n);
  expect(usdToNano(1234567.891234567)).toBe(1_234_567_891_234_567n);
  expect(nanoToUsd(25_500_000_000n)).toBe(25.5);
});

test('error: negative, NaN and huge amounts are refused', () => {
  for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY, 1e16]) expect(usdToNano(bad)).toBeNull();
});
