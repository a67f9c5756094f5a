/**
 * `string` schemas: minLength and maxLength (characters of the parsed string, an escape one
 * character), pattern (pattern-expr.ts) and format (string-formats.ts), as the JSON strings that
 * satisfy them. A pattern or format with a length bound is enforced when the bound holds for every
 * string of it anyway, or when its one open repetition of single characters can be narrowed to the
 * bound (`^[a-z]+$` with maxLength 8 → 1…8 letters); otherwise the length can't be enforced with it.
 */
import { ANY_TEXT, BMP_TEXT } from './char-set.js';
import { alt, cls, type Expr, isNever, lengthRange, NEVER, rep, seq } from './expr.js';
import { jsonString } from './json-string.js';
import type { Enforcer } from './number-schema.js';
import { MAX_PATTERN_REPEAT, PatternNotSupported, patternExpr } from './pattern-expr.js';
import type { SchemaPath } from './schema-keyword-error.js';
import { formatExpr, STRING_FORMATS } from './string-formats.js';

/** Most characters a length bound may ask for (a longer one would be a huge grammar). */
export const MAX_STRING_LENGTH = MAX_PATTERN_REPEAT;

type Schema = Readonly<Record<string, unknown>>;

/** A length keyword's value: a non-negative integer within MAX_STRING_LENGTH, or undefined. */
function lengthOf(schema: Schema, key: string, path: SchemaPath, e: Enforcer): number | undefined {
  const value = schema[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0)
    e.invalid(path, key, 'must be a non-negative integer.');
  if (value > MAX_STRING_LENGTH) {
    e.cannot(path, key, `is above ${MAX_STRING_LENGTH}, the most the grammar writes out.`);
    return undefined;
  }
  return value;
}

/**
 * `x` with its one open repetition of single characters narrowed so that the whole is `min`…`max`
 * characters long; undefined when `x` is not of that shape. Alternatives are narrowed one by one.
 */
function narrowed(x: Expr, min: number, max: number): Expr | undefined {
  if (x.k === 'alt') {
    const parts = x.xs.map((y) => narrowed(y, min, max));
    return parts.some((p) => p === undefined) ? undefined : alt(...(parts as Expr[]));
  }
  const [least, most] = lengthRange(x);
  if (least >= min && most <= max) return x;
  if (least === most) return NEVER;
  const parts = x.k === 'seq' ? x.xs : [x];
  const open = parts.flatMap((p, i) => {
    const [lo, hi] = lengthRange(p);
    return lo === hi ? [] : [i];
  });
  if (open.length !== 1) return undefined;
  const at = open[0]!;
  const repeated = parts[at]!;
  if (repeated.k !== 'rep' || lengthRange(repeated.x).join() !== '1,1') return undefined;
  const fixed = parts.reduce((sum, p, i) => (i === at ? sum : sum + lengthRange(p)[0]), 0);
  const from = Math.max(repeated.min, min - fixed);
  const to = Math.min(repeated.max, max - fixed);
  if (from > to) return NEVER;
  return seq(...parts.map((p, i) => (i === at ? rep(repeated.x, from, to) : p)));
}

/** The JSON strings of a `string` schema. */
export function stringExpr(schema: Schema, path: SchemaPath, e: Enforcer): Expr {
  const min = lengthOf(schema, 'minLength', path, e) ?? 0;
  const max = lengthOf(schema, 'maxLength', path, e) ?? Number.POSITIVE_INFINITY;
  if (min > max) e.invalid(path, 'minLength', 'is greater than maxLength: no string satisfies both.');
  let content: Expr | undefined;
  const { format, pattern } = schema;
  if (format !== undefined) {
    if (typeof format !== 'string') e.invalid(path, 'format', 'must be a string.');
    content = formatExpr(format);
    if (!content) e.cannot(path, 'format', `'${format}' is not one of ${STRING_FORMATS.join(', ')}.`);
  }
  if (pattern !== undefined) {
    if (typeof pattern !== 'string') e.invalid(path, 'pattern', 'must be a string.');
    if (content) {
      e.cannot(path, 'pattern', 'cannot be enforced together with format.');
    } else {
      try {
        content = patternExpr(pattern);
      } catch (error) {
        if (!(error instanceof PatternNotSupported)) throw error;
        e.cannot(path, 'pattern', `cannot be enforced: ${error.message}.`);
      }
    }
  }
  if (!content) {
    // Any string: BMP characters when the length counts, so that every counter agrees.
    const bounded = min > 0 || max < Number.POSITIVE_INFINITY;
    return jsonString(rep(cls(bounded ? BMP_TEXT : ANY_TEXT), min, max));
  }
  const [lo, hi] = lengthRange(content);
  if (lo < min || hi > max) {
    const narrow = narrowed(content, min, max);
    if (narrow && isNever(narrow))
      e.invalid(path, lo < min ? 'minLength' : 'maxLength', 'leaves no string of the pattern.');
    if (narrow) content = narrow;
    else {
      const key = hi > max ? 'maxLength' : 'minLength';
      e.cannot(path, key, `cannot be enforced together with ${format !== undefined ? 'format' : 'pattern'}.`);
    }
  }
  return jsonString(content);
}
