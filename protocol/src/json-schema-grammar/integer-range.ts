/**
 * The integers of a range, written as JSON writes them (no leading zeros, no `-0`, no exponent), as
 * a grammar of digits: split by digit count, then digit by digit the way llama.cpp's own
 * json-schema-to-grammar bounds integers.
 */
import { alt, cls, type Expr, lit, NEVER, rep, seq } from './expr.js';

const DIGIT = cls([[0x30, 0x39]]);

/** A digit from `a` to `b` (characters '0'…'9'). */
function digitRange(a: number, b: number): Expr {
  return a === b ? lit(String(a)) : cls([[0x30 + a, 0x30 + b]]);
}

/** Digit strings of `x.length` digits from `x` to `y` (same length, x ≤ y), leading zeros allowed. */
function sameLength(x: string, y: string): Expr {
  if (x === y) return lit(x);
  let common = 0;
  while (x[common] === y[common]) common++;
  const prefix = lit(x.slice(0, common));
  const d = Number(x[common]);
  const e = Number(y[common]);
  const xs = x.slice(common + 1);
  const ys = y.slice(common + 1);
  const n = xs.length;
  const lowFull = /^0*$/.test(xs);
  const highFull = /^9*$/.test(ys);
  const parts: Expr[] = [];
  // The first differing digit d … e: d with the rest ≥ xs, e with the rest ≤ ys, any rest between.
  const from = lowFull ? d : d + 1;
  const to = highFull ? e : e - 1;
  if (!lowFull) parts.push(seq(lit(String(d)), sameLength(xs, '9'.repeat(n))));
  if (from <= to) parts.push(seq(digitRange(from, to), rep(DIGIT, n, n)));
  if (!highFull) parts.push(seq(lit(String(e)), sameLength('0'.repeat(n), ys)));
  return seq(prefix, alt(...parts));
}

/** The integers from `a` to `b` (0 ≤ a ≤ b), without leading zeros. */
export function unsignedRange(a: bigint, b: bigint): Expr {
  if (a > b) return NEVER;
  const parts: Expr[] = [];
  /** A run of digit counts whose every number is in range: `[1-9] [0-9]{from-1,to-1}`. */
  let full: [number, number] | undefined;
  const flush = () => {
    if (full) parts.push(seq(cls([[0x31, 0x39]]), rep(DIGIT, full[0] - 1, full[1] - 1)));
    full = undefined;
  };
  for (let digits = a.toString().length; digits <= b.toString().length; digits++) {
    const least = digits === 1 ? 0n : 10n ** BigInt(digits - 1);
    const most = 10n ** BigInt(digits) - 1n;
    const lo = a > least ? a : least;
    const hi = b < most ? b : most;
    if (lo > hi) continue;
    if (digits > 1 && lo === least && hi === most) {
      full = full ? [full[0], digits] : [digits, digits];
      continue;
    }
    flush();
    parts.push(sameLength(lo.toString(), hi.toString()));
  }
  flush();
  return alt(...parts);
}

/** The integers from `lo` to `hi` (NEVER when lo > hi), negatives with a `-`, no `-0`. */
export function integerRange(lo: bigint, hi: bigint): Expr {
  if (lo > hi) return NEVER;
  const parts: Expr[] = [];
  if (lo < 0n) parts.push(seq(lit('-'), unsignedRange(hi < 0n ? -hi : 1n, -lo)));
  if (hi >= 0n) parts.push(unsignedRange(lo > 0n ? lo : 0n, hi));
  return alt(...parts);
}
