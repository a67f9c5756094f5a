/** An expression as a JavaScript RegExp: to test a value against it (enum-values.ts, tests). */
import type { Expr } from './expr.js';

const escapeCp = (cp: number): string => `\\u{${cp.toString(16)}}`;

/** `x` (no rule references) as an anchored RegExp with the `u` flag. */
export function toRegExp(x: Expr): RegExp {
  const write = (e: Expr): string => {
    switch (e.k) {
      case 'lit':
        return [...e.s].map((c) => escapeCp(c.codePointAt(0)!)).join('');
      case 'cls':
        return `[${e.ranges.map(([a, b]) => `${escapeCp(a)}-${escapeCp(b)}`).join('')}]`;
      case 'seq':
        return e.xs.map((y) => `(?:${write(y)})`).join('');
      case 'alt':
        return e.xs.length === 0 ? '[^\\s\\S]' : `(?:${e.xs.map(write).join('|')})`;
      case 'rep':
        return `(?:${write(e.x)}){${e.min},${e.max === Number.POSITIVE_INFINITY ? '' : e.max}}`;
      case 'ref':
        throw new Error(`toRegExp: a reference (${e.name})`);
    }
  };
  return new RegExp(`^(?:${write(x)})$`, 'u');
}
