import { describe, expect, test } from 'vitest';
import { toBigInt, toBigIntOrNull, toMillis } from './bigint.js';

describe('toBigInt', () => {
  test('default', () => {
    expect(toBigInt(5)).toBe(5n);
    expect(toBigInt('9223372036854775807')).toBe(9223372036854775807n);
    expect(toBigInt(-3n)).toBe(-3n);
    expect(toBigIntOrNull(null)).toBeNull();
    expect(toMillis('1700000000000')).toBe(1_700_000_000_000);
  });

  test('error: not an integer', () => {
    expect(() => toBigInt('1.5')).toThrow(TypeError);
    expect(() => toBigInt(2 ** 60)).toThrow(RangeError);
    expect(() => toBigInt(null)).toThrow(TypeError);
  });
});
