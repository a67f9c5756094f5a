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
 * Code points a three-byte UTF-8 sequence led by 0xE0 spells. llama.cpp's grammar decodes UTF-8
 * leniently: after 0xE0 it takes a second byte 0x80–0x9F, an overlong form of U+0080–U+07FF that
 * JavaScript decodes as three U+FFFD — a random-weight model writes such bytes. A set without
 * these code points never lets 0xE0 through, so no overlong form either.
 */
export const E0_BLOCK: Ranges = [[0x800, 0xfff]];
const TWO_BYTE: Ranges = [[0x80, 0x7ff]];

/**
 * `ranges` as characters whose count every counter agrees on: no surrogates, and U+0800–U+0FFF
 * left out when two-byte characters are in (E0_BLOCK). Undefined when a character lies above
 * U+FFFF: one code point (JSON Schema's count) but two UTF-16 units (JavaScript's `length`, zod's
 * `.max()`), and llama.cpp takes lead bytes 0xF8–0xFF as if they were 0xF0–0xF3.
 */
export function countable(ranges: Ranges): Ranges | undefined {
  if (ranges.some(([, b]) => b > 0xffff)) return undefined;
  const set = subtract(ranges, SURROGATES);
  return intersect(set, TWO_BYTE).length > 0 && intersect(set, E0_BLOCK).length > 0
    ? subtract(set, E0_BLOCK)
    : set;
}

/**
 * The characters a length-bounded or patterned string is written with: printable ASCII, tab and
 * newline, and the rest of the Basic Multilingual Plane but its controls, surrogates and
 * U+0800–U+0FFF (countable()).
 */
export const BMP_TEXT: Ranges = countable(
  normalize([
    [0x09, 0x0a],
    [0x20, 0x7e],
    [0xa0, 0xd7ff],
    [0xe000, 0xfffd],
  ]),
)!;

/**
 * The characters of an unconstrained string: all but controls and surrogates (emoji, Devanagari, …).
 * llama.cpp's lenient decoding may let an invalid byte sequence through here (U+FFFD once parsed):
 * nothing counts these characters, so no keyword is broken by one.
 */
export const ANY_TEXT: Ranges = normalize([
  [0x09, 0x0a],
  [0x20, 0x7e],
  [0xa0, 0xd7ff],
  [0xe000, 0xfffd],
  [0x10000, 0x10ffff],
]);

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
