/**
 * Number grammars checked exactly: each expression as a RegExp against every number of a window
 * around its bounds, written as JavaScript writes it (and, to be refused, with a trailing zero).
 */
import { describe, expect, test } from 'vitest';
import { toDecimal } from './decimal.js';
import { decimalRange } from './decimal-range.js';
import { toRegExp } from './expr-testing.js';
import { integerRange } from './integer-range.js';
import { type Enforcer, numberExpr } from './number-schema.js';
import { SchemaKeywordError } from './schema-keyword-error.js';

const strict: Enforcer = {
  cannot: (path, keyword, reason) => {
    throw new SchemaKeywordError(path, keyword, reason);
  },
  invalid: (path, keyword, reason) => {
    throw new SchemaKeywordError(path, keyword, reason);
  },
};

/** The numbers of a window the expression of `schema` gets wrong (at most 5). */
function misses(
  schema: Record<string, unknown>,
  integer: boolean,
  fits: (v: number) => boolean,
  values: number[],
) {
  const re = toRegExp(numberExpr(schema, integer, [], strict));
  const wrong: string[] = [];
  for (const v of values) {
    if (re.test(String(v)) !== fits(v) && wrong.length < 5) wrong.push(String(v));
    // With a trailing zero: never let in what does not fit (enumerated values are written shortest).
    if (!Number.isInteger(v) && re.test(`${v}0`) && !fits(v) && wrong.length < 5) wrong.push(`${v}0`);
  }
  return wrong;
}

const steps = (from: number, to: number, by: number) =>
  Array.from({ length: Math.round((to - from) / by) + 1 }, (_, i) => Number((from + i * by).toFixed(6)));

describe('integer and decimal ranges', () => {
  test('default: every integer of a window is in the grammar exactly when it is in range', () => {
    const wrong: string[] = [];
    for (const [lo, hi] of [
      [-1234, 5678],
      [0, 0],
      [-5, -1],
      [99, 1001],
      [-1000, 10],
      [10, 99],
    ] as const) {
      const re = toRegExp(integerRange(BigInt(lo), BigInt(hi)));
      for (let n = lo - 150; n <= hi + 150; n++)
        if (re.test(String(n)) !== (n >= lo && n <= hi)) wrong.push(`${n}`);
      for (const bad of ['-0', '01', '+1', '1e2', '1.0']) if (re.test(bad)) wrong.push(bad);
    }
    expect(wrong).toEqual([]);
  });

  test('default: decimals with inclusive and exclusive bounds, compared digit by digit', () => {
    const cases = [
      [-90, false, 60, false],
      [0.25, true, 1.5, false],
      [-1.5, false, -0.25, true],
      [null, false, 0, true],
      [0, true, null, false],
      [-0.001, false, 0.001, false],
      [2.5, false, 2.75, true],
    ] as const;
    const wrong: string[] = [];
    for (const [lo, loEx, hi, hiEx] of cases) {
      const re = toRegExp(
        decimalRange(
          lo === null ? null : { at: toDecimal(lo), exclusive: loEx },
          hi === null ? null : { at: toDecimal(hi), exclusive: hiEx },
          3,
          3,
        ),
      );
      for (let k = -120_000; k <= 120_000; k += 3) {
        const v = k / 1000;
        const inRange =
          (lo === null || (loEx ? v > lo : v >= lo)) &&
          (hi === null || (hiEx ? v < hi : v <= hi)) &&
          Math.abs(v) < 1000;
        if (re.test(String(v)) !== (inRange && !Object.is(v, -0))) wrong.push(`${v} in ${lo}…${hi}`);
      }
      for (const bad of ['1.', '.5', '-0', '1e3', '01.5']) if (re.test(bad)) wrong.push(bad);
    }
    expect(wrong.slice(0, 5)).toEqual([]);
  });
});

describe('numberExpr', () => {
  test('default: integer minimum, maximum, exclusiveMinimum, exclusiveMaximum', () => {
    const window = steps(-60, 60, 0.5);
    expect(
      misses({ minimum: -7, maximum: 12 }, true, (v) => Number.isInteger(v) && v >= -7 && v <= 12, window),
    ).toEqual([]);
    expect(
      misses(
        { exclusiveMinimum: -7, exclusiveMaximum: 12.5 },
        true,
        (v) => Number.isInteger(v) && v > -7 && v < 12.5,
        window,
      ),
    ).toEqual([]);
    // Draft 4's boolean form.
    expect(
      misses({ minimum: 3, exclusiveMinimum: true }, true, (v) => Number.isInteger(v) && v > 3, window),
    ).toEqual([]);
  });

  test('default: number bounds (the AI SDK example: min(-90).max(60)) and exclusive ones', () => {
    const window = steps(-100, 100, 0.125);
    expect(misses({ minimum: -90, maximum: 60 }, false, (v) => v >= -90 && v <= 60, window)).toEqual([]);
    expect(
      misses({ exclusiveMinimum: 0, exclusiveMaximum: 1 }, false, (v) => v > 0 && v < 1, window),
    ).toEqual([]);
    expect(
      misses({ minimum: 0.5, exclusiveMaximum: 60.25 }, false, (v) => v >= 0.5 && v < 60.25, window),
    ).toEqual([]);
  });

  test('default: multipleOf — enumerated, powers of ten, decimals', () => {
    const window = steps(-120, 120, 0.25);
    const multiple = (v: number, k: number) => Math.abs(v / k - Math.round(v / k)) < 1e-9;
    expect(
      misses(
        { minimum: -50, maximum: 50, multipleOf: 7 },
        true,
        (v) => multiple(v, 7) && v >= -50 && v <= 50,
        window,
      ),
    ).toEqual([]);
    expect(misses({ multipleOf: 10 }, true, (v) => multiple(v, 10), window)).toEqual([]);
    expect(
      misses(
        { minimum: 0, maximum: 2, multipleOf: 0.25 },
        false,
        (v) => multiple(v, 0.25) && v >= 0 && v <= 2,
        window,
      ),
    ).toEqual([]);
    const cents = toRegExp(numberExpr({ multipleOf: 0.01 }, false, [], strict));
    expect(['1.23', '-0.5', '7', '1.20'].map((t) => cents.test(t))).toEqual([true, true, true, true]);
    expect(['1.234', '0.001'].map((t) => cents.test(t))).toEqual([false, false]);
  });

  test('behavior: no exponent and at most 15 integer digits: every number is finite', () => {
    const re = toRegExp(numberExpr({}, false, [], strict));
    expect(['1e5', '1E400', '-1e-3', '1234567890123456', 'Infinity'].some((t) => re.test(t))).toBe(false);
    expect(re.test('123456789012345.123456')).toBe(true);
  });

  test('error: what the grammar cannot enforce names the keyword; a lenient enforcer leaves it out', () => {
    const cases: [Record<string, unknown>, boolean, string][] = [
      [{ multipleOf: 3 }, true, 'multipleOf'],
      [{ multipleOf: 0.3 }, false, 'multipleOf'],
      [{ exclusiveMinimum: 0.30000000000000004 }, false, 'exclusiveMinimum'],
    ];
    for (const [schema, integer, keyword] of cases) {
      expect(() => numberExpr(schema, integer, ['properties', 'n'], strict)).toThrow(
        expect.objectContaining({ param: `properties.n.${keyword}` }),
      );
      const left: string[] = [];
      numberExpr(schema, integer, [], { ...strict, cannot: (_, k) => void left.push(k) });
      expect(left).toEqual([keyword]);
    }
    expect(() => numberExpr({ minimum: 1e16 }, true, [], strict)).toThrow(
      expect.objectContaining({ param: 'minimum' }),
    );
    expect(() => numberExpr({ minimum: 5, maximum: 4 }, false, [], strict)).toThrow(SchemaKeywordError);
    expect(() => numberExpr({ multipleOf: 0 }, false, [], strict)).toThrow(
      expect.objectContaining({ param: 'multipleOf' }),
    );
  });
});
