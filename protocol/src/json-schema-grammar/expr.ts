/**
 * The grammar expressions the JSON Schema compiler builds before it writes GBNF: literals, sets of
 * code points, sequences, alternatives, bounded repetitions and references to named rules. A
 * string's content is built as an expression over its decoded characters (what `minLength` and
 * `pattern` speak of) and JSON-encoded afterwards (json-string.ts).
 */

/** Inclusive code point ranges, sorted and disjoint (char-set.ts keeps them so). */
export type Ranges = readonly (readonly [number, number])[];

export type Expr =
  | { readonly k: 'lit'; readonly s: string }
  | { readonly k: 'cls'; readonly ranges: Ranges }
  | { readonly k: 'seq'; readonly xs: readonly Expr[] }
  | { readonly k: 'alt'; readonly xs: readonly Expr[] }
  | { readonly k: 'rep'; readonly x: Expr; readonly min: number; readonly max: number }
  | { readonly k: 'ref'; readonly name: string };

/** The empty string. */
export const EMPTY: Expr = { k: 'lit', s: '' };
/** No string at all: an unsatisfiable constraint. */
export const NEVER: Expr = { k: 'alt', xs: [] };

export const isNever = (x: Expr): boolean => x.k === 'alt' && x.xs.length === 0;
export const isEmpty = (x: Expr): boolean => x.k === 'lit' && x.s === '';

export const lit = (s: string): Expr => ({ k: 'lit', s });
export const ref = (name: string): Expr => ({ k: 'ref', name });

/** A set of code points; no ranges is NEVER. */
export function cls(ranges: Ranges): Expr {
  return ranges.length === 0 ? NEVER : { k: 'cls', ranges };
}

/** `xs` one after another: nested sequences flattened, adjacent literals joined; NEVER if any is. */
export function seq(...xs: Expr[]): Expr {
  const out: Expr[] = [];
  for (const x of xs) {
    if (isNever(x)) return NEVER;
    for (const y of x.k === 'seq' ? x.xs : [x]) {
      if (isEmpty(y)) continue;
      const last = out.at(-1);
      if (y.k === 'lit' && last?.k === 'lit') out[out.length - 1] = lit(last.s + y.s);
      else out.push(y);
    }
  }
  if (out.length === 0) return EMPTY;
  return out.length === 1 ? out[0]! : { k: 'seq', xs: out };
}

/** Any one of `xs`: nested alternatives flattened, NEVERs and repeats dropped. */
export function alt(...xs: Expr[]): Expr {
  const out: Expr[] = [];
  const seen = new Set<string>();
  let empty = false;
  for (const x of xs) {
    for (const y of x.k === 'alt' ? x.xs : [x]) {
      // The empty string among others: the others made optional (GBNF's `( … )?`).
      if (isEmpty(y)) empty = true;
      if (isEmpty(y)) continue;
      const key = JSON.stringify(y);
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(y);
    }
  }
  const one: Expr = out.length === 1 ? out[0]! : { k: 'alt', xs: out };
  if (!empty) return one;
  if (out.length === 0 || (one.k === 'rep' && one.min === 0)) return out.length === 0 ? EMPTY : one;
  return rep(one, 0, 1);
}

/** `x` between `min` and `max` times (`max` may be Infinity). */
export function rep(x: Expr, min: number, max: number): Expr {
  if (max < min) return NEVER;
  if (max === 0 || isEmpty(x)) return EMPTY;
  if (isNever(x)) return min === 0 ? EMPTY : NEVER;
  if (min === 1 && max === 1) return x;
  return { k: 'rep', x, min, max };
}

export const opt = (x: Expr): Expr => rep(x, 0, 1);

/**
 * The shortest and longest string `x` matches, in code points (max may be Infinity); a reference
 * counts as unknown: [0, Infinity].
 */
export function lengthRange(x: Expr): [number, number] {
  switch (x.k) {
    case 'lit':
      return [[...x.s].length, [...x.s].length];
    case 'cls':
      return [1, 1];
    case 'ref':
      return [0, Number.POSITIVE_INFINITY];
    case 'rep': {
      const [lo, hi] = lengthRange(x.x);
      return [lo * x.min, hi === 0 ? 0 : hi * x.max];
    }
    case 'seq':
      return x.xs.map(lengthRange).reduce(([a, b], [c, d]) => [a + c, b + d], [0, 0]);
    case 'alt': {
      if (x.xs.length === 0) return [Number.POSITIVE_INFINITY, 0];
      const ranges = x.xs.map(lengthRange);
      return [Math.min(...ranges.map((r) => r[0])), Math.max(...ranges.map((r) => r[1]))];
    }
  }
}
