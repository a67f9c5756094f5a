/**
 * JSON objects and arrays of compiled members: an object's properties in the order the schema
 * gives them, each optional one free to be left out (a rule per optional property keeps the grammar
 * linear in their number); an array's tuple items, then its repeated items within minItems…maxItems.
 * Whitespace: at most one space after `:` and `,`.
 */
import { alt, EMPTY, type Expr, lit, opt, ref, rep, seq } from './expr.js';

export const SPACE = opt(lit(' '));
export const COMMA = seq(lit(','), SPACE);

/** A property of an object expression: its name, its value, whether it must be there. */
export type Member = { readonly key: string; readonly value: Expr; readonly required: boolean };

/** `"key": value`. */
export const pair = (key: Expr, value: Expr): Expr => seq(key, lit(':'), SPACE, value);

/**
 * An object of `members` in order, optional ones left out or not; `define` names a rule (the
 * members after an optional one, reached with or without it).
 */
export function objectExpr(members: readonly Member[], define: (body: Expr) => string): Expr {
  const entries = members.map((m) => pair(lit(JSON.stringify(m.key)), m.value));
  // after[i]: members i… when one came before (each preceded by a comma); first[i]: when none did.
  let after: Expr = EMPTY;
  let first: Expr = EMPTY;
  for (let i = members.length - 1; i >= 0; i--) {
    const withIt = seq(entries[i]!, after);
    first = members[i]!.required ? withIt : alt(withIt, first);
    const withComma = seq(COMMA, entries[i]!, after);
    after = members[i]!.required ? withComma : ref(define(alt(withComma, after)));
  }
  return seq(lit('{'), first, lit('}'));
}

/** An object of any keys (`key` a JSON string expression) with values of `value`, at most `max`. */
export function mapExpr(key: Expr, value: Expr, max: number): Expr {
  if (max === 0) return lit('{}');
  const entry = pair(key, value);
  return seq(lit('{'), opt(seq(entry, rep(seq(COMMA, entry), 0, max - 1))), lit('}'));
}

/** An array of `tuple` items in order, then `rest` items `min`…`max` times (rest null: none). */
export function arrayExpr(tuple: readonly Expr[], rest: Expr | null, min: number, max: number): Expr {
  if (tuple.length > 0) {
    const head = seq(...tuple.flatMap((x, i) => (i === 0 ? [x] : [COMMA, x])));
    const tail = rest ? rep(seq(COMMA, rest), min, max) : EMPTY;
    return seq(lit('['), head, tail, lit(']'));
  }
  if (!rest || max === 0) return lit('[]');
  const more = (least: number) => rep(seq(COMMA, rest), least, max - 1);
  const items = seq(rest, more(Math.max(0, min - 1)));
  return seq(lit('['), min === 0 ? opt(items) : items, lit(']'));
}
