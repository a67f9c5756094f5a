/**
 * `integer` and `number` schemas: minimum, maximum, exclusiveMinimum, exclusiveMaximum (numbers, or
 * draft 4's booleans) and multipleOf, as the JSON numbers that satisfy them — no exponent, so every
 * one is finite and exact where it must be:
 * - integers have at most 15 digits (all safe integers);
 * - numbers have at most 15 integer digits and 6 fraction digits, and 9 integer digits when a bound
 *   is exclusive: then every output has at most 15 significant digits, so it parses to a double
 *   distinct from the bound's (a bound of more than 15 significant digits cannot be excluded so).
 */

import {
  ceilOf,
  type Decimal,
  floorOf,
  isInteger,
  scaledText,
  significantDigits,
  toDecimal,
} from './decimal.js';
import { type Bound, decimalRange } from './decimal-range.js';
import { alt, type Expr, isNever, lit, NEVER, rep, seq } from './expr.js';
import { unsignedRange } from './integer-range.js';
import type { SchemaPath } from './schema-keyword-error.js';

/** Digits of an integer at most (|n| < 10^15: every one a safe integer). */
export const MAX_INTEGER_DIGITS = 15;
/** Fraction digits of a number at most. */
export const MAX_FRACTION_DIGITS = 6;
/** Integer digits of a number with an exclusive bound: 9 + 6 = 15 significant digits. */
const EXCLUSIVE_INTEGER_DIGITS = 9;
/** Most multiples a multipleOf may leave in range to be written out one by one. */
export const MAX_ENUMERATED_MULTIPLES = 1000;

/** What a keyword-compiling step may report: it can't enforce one, or the schema is invalid. */
export type Enforcer = {
  /** Strict: throws SchemaKeywordError; otherwise the keyword is left out. */
  cannot(path: SchemaPath, keyword: string, reason: string): void;
  /** Throws SchemaKeywordError: the keyword's value is not valid, or no value satisfies it. */
  invalid(path: SchemaPath, keyword: string, reason: string): never;
};

type Schema = Readonly<Record<string, unknown>>;

/** A bound, with the keyword that set it and its value as given. */
type SchemaBound = Bound & { readonly key: string; readonly value: number };

/** The lower or upper bound of `schema`: the tighter of the inclusive and the exclusive keyword. */
function boundOf(schema: Schema, side: 'min' | 'max', path: SchemaPath, e: Enforcer): SchemaBound | null {
  const inclusiveKey = side === 'min' ? 'minimum' : 'maximum';
  const exclusiveKey = side === 'min' ? 'exclusiveMinimum' : 'exclusiveMaximum';
  const inclusive = schema[inclusiveKey];
  const exclusive = schema[exclusiveKey];
  if (inclusive !== undefined && !(typeof inclusive === 'number' && Number.isFinite(inclusive)))
    e.invalid(path, inclusiveKey, 'must be a finite number.');
  if (exclusive !== undefined && !(typeof exclusive === 'number' && Number.isFinite(exclusive)))
    if (typeof exclusive !== 'boolean') e.invalid(path, exclusiveKey, 'must be a finite number.');
  const candidates: SchemaBound[] = [];
  // Draft 4: `exclusiveMinimum: true` makes minimum exclusive.
  if (typeof inclusive === 'number') {
    const key = exclusive === true ? exclusiveKey : inclusiveKey;
    candidates.push({ at: toDecimal(inclusive), exclusive: exclusive === true, key, value: inclusive });
  }
  if (typeof exclusive === 'number')
    candidates.push({ at: toDecimal(exclusive), exclusive: true, key: exclusiveKey, value: exclusive });
  if (candidates.length === 0) return null;
  return candidates.reduce((a, b) =>
    a.value === b.value
      ? a.exclusive
        ? a
        : b
      : (side === 'min' ? a.value > b.value : a.value < b.value)
        ? a
        : b,
  );
}

/** The integers in range, as bigints (exclusive bounds moved in), capped at 15 digits. */
function integerBounds(lo: Bound | null, hi: Bound | null): [bigint, bigint] {
  const most = 10n ** BigInt(MAX_INTEGER_DIGITS) - 1n;
  let a = lo ? ceilOf(lo.at) : -most;
  let b = hi ? floorOf(hi.at) : most;
  if (lo?.exclusive && isInteger(lo.at)) a += 1n;
  if (hi?.exclusive && isInteger(hi.at)) b -= 1n;
  return [a < -most ? -most : a, b > most ? most : b];
}

/** `multipleOf` as an integer scaled down: k = coefficient × 10^-places. */
function scaleOf(k: Decimal): { coefficient: bigint; places: number } {
  return { coefficient: BigInt(k.int.toString() + k.frac), places: k.frac.length };
}

/** The JSON numbers of an `integer` (`integer: true`) or `number` schema. */
export function numberExpr(schema: Schema, integer: boolean, path: SchemaPath, e: Enforcer): Expr {
  let lo = boundOf(schema, 'min', path, e);
  let hi = boundOf(schema, 'max', path, e);
  const step = schema.multipleOf;
  if (step !== undefined && !(typeof step === 'number' && Number.isFinite(step) && step > 0))
    e.invalid(path, 'multipleOf', 'must be a number greater than 0.');
  if (step !== undefined && significantDigits(step as number) > 15) {
    e.cannot(path, 'multipleOf', 'has more than 15 significant digits.');
  }
  const k =
    step !== undefined && significantDigits(step as number) <= 15 ? toDecimal(step as number) : undefined;
  const scale = k ? scaleOf(k) : undefined;
  // Every multiple of an integer step is an integer: an integer schema.
  const whole = integer || (scale !== undefined && scale.places === 0);
  if (!whole) {
    // Lenient: an exclusive bound that can't be kept apart is left inclusive.
    if (lo?.exclusive && significantDigits(lo.value) > 15) {
      e.cannot(path, lo.key, TOO_PRECISE);
      lo = { ...lo, exclusive: false };
    }
    if (hi?.exclusive && significantDigits(hi.value) > 15) {
      e.cannot(path, hi.key, TOO_PRECISE);
      hi = { ...hi, exclusive: false };
    }
  }
  if (whole) {
    const [a, b] = integerBounds(lo, hi);
    if (a > b) return emptyRange(lo, hi, path, e);
    if (!scale || (scale.coefficient === 1n && scale.places === 0)) return integerRangeExpr(a, b);
    return integerMultiples(a, b, scale, path, e);
  }
  if (scale && scale.coefficient !== 1n) return decimalMultiples(lo, hi, scale, path, e);
  const fracDigits = scale ? Math.min(scale.places, MAX_FRACTION_DIGITS) : MAX_FRACTION_DIGITS;
  const intDigits = lo?.exclusive || hi?.exclusive ? EXCLUSIVE_INTEGER_DIGITS : MAX_INTEGER_DIGITS;
  const expr = decimalRange(lo, hi, intDigits, fracDigits);
  return isNever(expr) ? emptyRange(lo, hi, path, e) : expr;
}

const TOO_PRECISE = 'has more than 15 significant digits: an excluded bound must have at most 15.';

function emptyRange(lo: SchemaBound | null, hi: SchemaBound | null, path: SchemaPath, e: Enforcer): never {
  const cap = `numbers are written with at most ${MAX_INTEGER_DIGITS} integer digits`;
  e.invalid(path, (lo ?? hi)?.key ?? 'minimum', `leaves no number in range (${cap}).`);
}

function integerRangeExpr(a: bigint, b: bigint): Expr {
  const parts: Expr[] = [];
  if (a < 0n) parts.push(seq(lit('-'), unsignedRange(b < 0n ? -b : 1n, -a)));
  if (b >= 0n) parts.push(unsignedRange(a > 0n ? a : 0n, b));
  return alt(...parts);
}

/** Ceiling and floor of a / b for bigints (b > 0). */
const ceilDiv = (a: bigint, b: bigint): bigint => (a >= 0n ? (a + b - 1n) / b : -(-a / b));
const floorDiv = (a: bigint, b: bigint): bigint => (a >= 0n ? a / b : -((-a + b - 1n) / b));

/** Integers from a to b that are multiples of coefficient × 10^-places. */
function integerMultiples(
  a: bigint,
  b: bigint,
  scale: { coefficient: bigint; places: number },
  path: SchemaPath,
  e: Enforcer,
): Expr {
  // n is a multiple of c / 10^p iff n × 10^p is a multiple of c: of c / gcd(c, 10^p).
  const tens = 10n ** BigInt(scale.places);
  let g = scale.coefficient;
  for (let t = tens; t !== 0n; ) [g, t] = [t, g % t];
  const step = scale.coefficient / g;
  const first = ceilDiv(a, step);
  const last = floorDiv(b, step);
  if (first > last) e.invalid(path, 'multipleOf', 'leaves no integer in range.');
  if (last - first < BigInt(MAX_ENUMERATED_MULTIPLES)) {
    const values: Expr[] = [];
    for (let q = first; q <= last; q++) values.push(lit((q * step).toString()));
    return alt(...values);
  }
  // A power of ten: the multiples of 10^z in range are their quotients followed by z zeros.
  const zeros = step.toString().length - 1;
  if (step === 10n ** BigInt(zeros)) {
    const tail = rep(lit('0'), zeros, zeros);
    const parts: Expr[] = [];
    if (first < 0n) parts.push(seq(lit('-'), unsignedRange(last < 0n ? -last : 1n, -first), tail));
    if (first <= 0n && last >= 0n) parts.push(lit('0'));
    if (last > 0n) parts.push(seq(unsignedRange(first > 1n ? first : 1n, last), tail));
    return alt(...parts);
  }
  e.cannot(
    path,
    'multipleOf',
    `leaves more than ${MAX_ENUMERATED_MULTIPLES} values in range and is not a power of ten.`,
  );
  return integerRangeExpr(a, b);
}

/** Numbers in range that are multiples of coefficient × 10^-places (coefficient > 1). */
function decimalMultiples(
  lo: Bound | null,
  hi: Bound | null,
  scale: { coefficient: bigint; places: number },
  path: SchemaPath,
  e: Enforcer,
): Expr {
  // Scaled by 10^places, the multiples are integers: bounds scaled the same way.
  const scaled = (b: Bound | null): Bound | null => {
    if (!b) return null;
    const digits = b.at.frac.padEnd(scale.places, '0');
    const int = b.at.int * 10n ** BigInt(scale.places) + BigInt(digits.slice(0, scale.places) || '0');
    return {
      at: { negative: b.at.negative, int, frac: digits.slice(scale.places).replace(/0+$/, '') },
      exclusive: b.exclusive,
    };
  };
  const [a, b] = lo && hi ? integerBounds(scaled(lo), scaled(hi)) : [1n, 0n];
  const first = ceilDiv(a, scale.coefficient);
  const last = floorDiv(b, scale.coefficient);
  if (lo && hi && first > last) e.invalid(path, 'multipleOf', 'leaves no number in range.');
  if (lo && hi && last - first < BigInt(MAX_ENUMERATED_MULTIPLES)) {
    const values: Expr[] = [];
    for (let q = first; q <= last; q++) values.push(lit(scaledText(q * scale.coefficient, scale.places)));
    return alt(...values);
  }
  e.cannot(
    path,
    'multipleOf',
    `is enforced for numbers as a power of ten (0.01: two decimals) or with at most ${MAX_ENUMERATED_MULTIPLES} multiples in range.`,
  );
  const expr = decimalRange(lo, hi, MAX_INTEGER_DIGITS, MAX_FRACTION_DIGITS);
  return isNever(expr) ? NEVER : expr;
}
