/**
 * For this folder's tests: an expression as a JavaScript RegExp (to check a language exactly over
 * many strings) and a random string of an expression (to check what it generates with a validator).
 */
import type { Expr } from './expr.js';

export { toRegExp } from './expr-regexp.js';

/** A seeded random source (mulberry32): numbers in [0, 1). */
export function randomSource(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A random string `x` matches; references are looked up in `rules`. Repetitions stop at most
 * `spread` past their minimum, and below `depth` 0 an alternative without references is taken.
 */
export function sampleExpr(
  x: Expr,
  random: () => number,
  rules: ReadonlyMap<string, Expr> = new Map(),
  spread = 6,
  depth = 12,
): string {
  const pick = (n: number) => Math.floor(random() * n);
  switch (x.k) {
    case 'lit':
      return x.s;
    case 'cls': {
      // Small ranges as likely as large ones: ASCII is not drowned by the rest of Unicode.
      const [a, b] = x.ranges[pick(x.ranges.length)]!;
      return String.fromCodePoint(a + pick(b - a + 1));
    }
    case 'seq':
      return x.xs.map((y) => sampleExpr(y, random, rules, spread, depth)).join('');
    case 'alt': {
      if (x.xs.length === 0) throw new Error('sampleExpr: NEVER');
      // Too deep: an alternative without references, so that recursion ends.
      const flat = x.xs.find((y) => !JSON.stringify(y).includes('"k":"ref"')) ?? x.xs[0]!;
      return sampleExpr(depth < 0 ? flat : x.xs[pick(x.xs.length)]!, random, rules, spread, depth);
    }
    case 'rep': {
      const top = Math.min(x.max, x.min + (depth < 0 ? 0 : spread));
      const n = x.min + pick(top - x.min + 1);
      return Array.from({ length: n }, () => sampleExpr(x.x, random, rules, spread, depth - 1)).join('');
    }
    case 'ref':
      return sampleExpr(rules.get(x.name)!, random, rules, spread, depth - 1);
  }
}
