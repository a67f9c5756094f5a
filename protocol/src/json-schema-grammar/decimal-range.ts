/**
 * The decimals of a range written as JSON numbers without an exponent: an integer part of at most a
 * given number of digits and an optional fraction of at most a given number of digits, compared
 * with the bounds exactly, digit by digit (a bound's fraction may be longer than the output's).
 */
import type { Decimal } from './decimal.js';
import { alt, cls, type Expr, isNever, lit, NEVER, opt, rep, seq } from './expr.js';
import { unsignedRange } from './integer-range.js';

const DIGIT = cls([[0x30, 0x39]]);

/** A bound: a decimal, and whether it is excluded (exclusiveMinimum/Maximum). */
export type Bound = { readonly at: Decimal; readonly exclusive: boolean };

/** A bound on a fraction's digits: the bound's own fraction digits (`'25'` for 0.25). */
type FracBound = { readonly e: string; readonly strict: boolean };

const isZero = (e: string): boolean => /^0*$/.test(e);

/**
 * Fraction digit strings t of 0…budget digits with lo ≤ 0.t ≤ hi (strict: <): whether the empty
 * one (0) is in, and the non-empty ones.
 */
function fractions(
  lo: FracBound | null,
  hi: FracBound | null,
  budget: number,
): { empty: boolean; more: Expr } {
  // ≥ 0 holds for every fraction.
  if (lo && !lo.strict && isZero(lo.e)) return fractions(null, hi, budget);
  const empty = (lo === null || (isZero(lo.e) && !lo.strict)) && (hi === null || !hi.strict || !isZero(hi.e));
  if (budget === 0) return { empty, more: NEVER };
  const d1 = lo ? Number(lo.e[0] ?? '0') : 0;
  const d2 = hi ? Number(hi.e[0] ?? '0') : 9;
  const parts: Expr[] = [];
  // First digits strictly between the bounds' first digits: any rest.
  const from = lo ? d1 + 1 : 0;
  const to = hi ? d2 - 1 : 9;
  if (from <= to) parts.push(seq(cls([[0x30 + from, 0x30 + to]]), rep(DIGIT, 0, budget - 1)));
  // A first digit equal to a bound's: the rest bounded by the rest of it.
  for (const c of new Set([...(lo ? [d1] : []), ...(hi ? [d2] : [])])) {
    if (c < d1 || c > d2) continue;
    const rest = fractions(
      lo && c === d1 ? { e: lo.e.slice(1), strict: lo.strict } : null,
      hi && c === d2 ? { e: hi.e.slice(1), strict: hi.strict } : null,
      budget - 1,
    );
    const tail = rest.empty ? opt(rest.more) : rest.more;
    if (!rest.empty && isNever(rest.more)) continue;
    parts.push(seq(lit(String(c)), tail));
  }
  return { empty, more: alt(...parts) };
}

/** An integer part's expression, then a fraction within lo…hi. */
function withFraction(int: Expr, lo: FracBound | null, hi: FracBound | null, fracDigits: number): Expr {
  const f = fractions(lo, hi, fracDigits);
  const point = isNever(f.more) ? NEVER : seq(lit('.'), f.more);
  return seq(int, f.empty ? opt(point) : point);
}

/**
 * Non-negative decimals from `lo` to `hi` (hi null: any with at most `intDigits` integer digits),
 * as `I` or `I.F`; lo and hi are non-negative.
 */
function unsignedDecimals(lo: Bound, hi: Bound | null, intDigits: number, fracDigits: number): Expr {
  const most = 10n ** BigInt(intDigits) - 1n;
  let top: Bound | null = hi;
  if (hi && hi.at.int > most) top = null;
  const aI = lo.at.int;
  const bI = top ? top.at.int : most;
  if (aI > bI) return NEVER;
  const loFrac = { e: lo.at.frac, strict: lo.exclusive };
  const hiFrac = top ? { e: top.at.frac, strict: top.exclusive } : null;
  if (aI === bI) return withFraction(lit(aI.toString()), loFrac, hiFrac, fracDigits);
  // No upper bound's fraction to respect: the top integer part goes with those between.
  const between = hiFrac ? unsignedRange(aI + 1n, bI - 1n) : unsignedRange(aI + 1n, bI);
  return alt(
    withFraction(lit(aI.toString()), loFrac, null, fracDigits),
    withFraction(between, null, null, fracDigits),
    hiFrac ? withFraction(lit(bI.toString()), null, hiFrac, fracDigits) : NEVER,
  );
}

const ZERO: Decimal = { negative: false, int: 0n, frac: '' };

/**
 * Decimals x with lo ≤ x ≤ hi (each bound optional, exclusive when asked), an integer part of at
 * most `intDigits` digits and a fraction of at most `fracDigits`; no `-0`, no exponent.
 */
export function decimalRange(
  lo: Bound | null,
  hi: Bound | null,
  intDigits: number,
  fracDigits: number,
): Expr {
  const parts: Expr[] = [];
  // x ≥ 0: from max(lo, 0) to hi.
  if (!hi?.at.negative) {
    const from = lo && !lo.at.negative ? lo : { at: ZERO, exclusive: false };
    const zeroExcluded = hi?.exclusive && hi.at.int === 0n && hi.at.frac === '';
    if (!zeroExcluded) parts.push(unsignedDecimals(from, hi, intDigits, fracDigits));
  }
  // x < 0: -x from max(-hi, 0) (excluding 0) to -lo.
  if (!lo || lo.at.negative) {
    const mirrored = (b: Bound): Bound => ({ at: { ...b.at, negative: false }, exclusive: b.exclusive });
    const from: Bound = hi?.at.negative ? mirrored(hi) : { at: ZERO, exclusive: true };
    parts.push(seq(lit('-'), unsignedDecimals(from, lo ? mirrored(lo) : null, intDigits, fracDigits)));
  }
  return alt(...parts);
}
