import { expect, test } from 'vitest';
import { MAX_CLIENT_USD, NANOUSD_PER_USD, nanoToUsd, nanoToUsdDecimal, usdToNano } from './money.js';

test('default: client USD numbers and decimal strings convert exactly as written', () => {
  expect(usdToNano(25.5)).toBe(25_500_000_000n);
  expect(usdToNano(0.1)).toBe(100_000_000n);
  expect(usdToNano(0)).toBe(0n);
  expect(usdToNano(1234567.891234567)).toBe(1_234_567_891_234_567n);
  expect(usdToNano('2.5')).toBe(2_500_000_000n);
  expect(usdToNano('007')).toBe(7n * NANOUSD_PER_USD);
  expect(usdToNano(MAX_CLIENT_USD)).toBe(BigInt(MAX_CLIENT_USD) * NANOUSD_PER_USD);
  expect(usdToNano(String(MAX_CLIENT_USD))).toBe(BigInt(MAX_CLIENT_USD) * NANOUSD_PER_USD);
  expect(nanoToUsd(25_500_000_000n)).toBe(25.5);
});

test('behavior: decimals past the ninth are dropped from strings, rounded from numbers', () => {
  expect(usdToNano('0.0000000019')).toBe(1n);
  expect(usdToNano(0.0000000019)).toBe(2n);
  expect(usdToNano(5e-324)).toBe(0n);
});

test('error: negative, non-finite, over the maximum and malformed values are null, never a throw', () => {
  const bad = [
    -1,
    -0.000001,
    Number.NaN,
    Number.POSITIVE_INFINITY,
    1e21,
    1e308,
    MAX_CLIENT_USD + 1,
    '1e+21',
    '1e21',
    '-1',
    '',
    ' 1',
    '1.',
    '.5',
    'NaN',
    '1'.repeat(38),
    `${MAX_CLIENT_USD}.000000001`,
  ];
  for (const value of bad) expect(usdToNano(value), String(value)).toBeNull();
  expect(usdToNano({} as unknown as string)).toBeNull();
});

test('behavior: nanousd as an exact USD decimal, no exponent, no trailing zeros', () => {
  expect(nanoToUsdDecimal(0n)).toBe('0');
  expect(nanoToUsdDecimal(1n)).toBe('0.000000001');
  expect(nanoToUsdDecimal(100n)).toBe('0.0000001'); // String(1e-7) would be "1e-7"
  expect(nanoToUsdDecimal(12_345n)).toBe('0.000012345');
  expect(nanoToUsdDecimal(2_500_000_000n)).toBe('2.5');
  expect(nanoToUsdDecimal(7n * NANOUSD_PER_USD)).toBe('7');
  expect(nanoToUsdDecimal(2n ** 63n - 1n)).toBe('9223372036.854775807');
  expect(nanoToUsdDecimal(-1_500_000_000n)).toBe('-1.5');
});
