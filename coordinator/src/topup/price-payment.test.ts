import { parseEther } from 'viem';
import { expect, test } from 'vitest';
import { pricePayment } from './price-payment.js';

test('default: stables are 1.0 USD, native at the configured price', () => {
  expect(pricePayment('USDC.s', 25_500_000n, 0n)).toBe(25_500_000_000n);
  expect(pricePayment('USD.s', 1n, 0n)).toBe(1_000n);
  expect(pricePayment('native', parseEther('2'), 2_500_000_000n)).toBe(5_000_000_000n);
  expect(pricePayment('native', 1n, 2_500_000_000n)).toBe(0n); // rounds down
});
