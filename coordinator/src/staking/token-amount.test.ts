import { parseEther } from 'viem';
import { expect, test } from 'vitest';
import { formatTokenAmount, parseTokenAmount } from './token-amount.js';

test('default: exactly four decimals and the symbol', () => {
  expect(parseTokenAmount('1.0000 TOK', 'TOK')).toBe(parseEther('1'));
  expect(parseTokenAmount('12.3456 TOK', 'TOK')).toBe(parseEther('12.3456'));
  expect(parseTokenAmount('0.0001 TOK', 'TOK')).toBe(parseEther('0.0001'));
});

test('error: anything else is null', () => {
  for (const bad of [
    '1.0 TOK',
    '1.00000 TOK',
    '-1.0000 TOK',
    '+1.0000 TOK',
    '1.0000 ETH',
    '1.0000 tok',
    '1.0000  TOK',
    ' 1.0000 TOK',
    '1.0000 TOK ',
    '1.0000',
    '01.0000 TOK',
    '1,0000 TOK',
    '1e3.0000 TOK',
    '',
    1,
    null,
  ]) {
    expect(parseTokenAmount(bad, 'TOK')).toBeNull();
  }
});

test('behavior: format truncates to four decimals', () => {
  expect(formatTokenAmount(0n, 'TOK')).toBe('0.0000 TOK');
  expect(formatTokenAmount(parseEther('1234.56789'), 'TOK')).toBe('1234.5678 TOK');
  expect(formatTokenAmount(parseEther('0.00009'), 'TOK')).toBe('0.0000 TOK');
});
