/**
 * Sets of code points as sorted, disjoint inclusive ranges, and the sets a JSON string's characters
 * are drawn from.
 */
import type { Ranges } from './expr.js';

type Range = readonly [number, number];

/** `ranges` sorted, overlapping and adjacent ones joined. */
export function normalize(ranges: readonly Range[]): Ranges {
  const sorted = [...ranges].filter(([a, b]) => a <= b).sort((x, y) => x[0] - y[0]);
  const out: [number, number][] = [];
  for (const [a, b] of sorted) {
    const last = out.at(-1);
    if (last && a <= last[1] + 1) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}

/** The code points of `a` not in `b`. */
export function subtract(a: Ranges, b: Ranges): Ranges {
  const out: [number, number][] = [];
  for (const [lo, hi] of a) {
    let from = lo;
    for (const [x, y] of b) {
      if (y < from || x > hi) continue;
      if (x > from) out.push([from, x - 1]);
      from = Math.max(from, y + 1);
    }
    if (from <= hi) out.push([from, hi]);
  }
  return normalize(out);
}

export const union = (...sets: Ranges[]): Ranges => normalize(sets.flat());

export const intersect = (a: Ranges, b: Ranges): Ranges => subtract(a, subtract(a, b));

export const chars = (text: string): Ranges =>
  normalize([...text].map((c) => [c.codePointAt(0)!, c.codePointAt(0)!]));

/** UTF-16 surrogates: not characters; a byte-level model could spell them in invalid UTF-8. */
export const SURROGATES: Ranges = [[0xd800, 0xdfff]];

/**
 * The characters a length-bounded or patterned string is written with: printable ASCII, tab and
 * newline, and the rest of the Basic Multilingual Plane but its controls and surrogates. Outside it
 * a character is one code point (JSON Schema's count) but two UTF-16 units (JavaScript's `length`,
 * which zod's `.max()` counts): inside it the two agree.
 */
export const BMP_TEXT: Ranges = normalize([
  [0x09, 0x0a],
  [0x20, 0x7e],
  [0xa0, 0xd7ff],
  [0xe000, 0xfffd],
]);

/** The characters of an unconstrained string: BMP_TEXT and the planes above it (emoji, …). */
export const ANY_TEXT: Ranges = union(BMP_TEXT, [[0x10000, 0x10ffff]]);

/** JavaScript's line terminators, which a regular expression's `.` does not match. */
export const LINE_TERMINATORS: Ranges = chars('\n\r\u2028\u2029');

export const DIGITS: Ranges = [[0x30, 0x39]];
export const WORD: Ranges = normalize([
  [0x30, 0x39],
  [0x41, 0x5a],
  [0x5f, 0x5f],
  [0x61, 0x7a],
]);
/** JavaScript's `\s`. */
export const SPACE: Ranges = union(chars('\t\n\v\f\r \u00a0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff'), [
  [0x2000, 0x200a],
]);
