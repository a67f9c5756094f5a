/**
 * An answer that is either prose or a JSON array of objects — a model's tool calls when it may call
 * them on its own (the node's `tool_choice` "auto": `[{"name": …, "arguments": …}]`). Which one is
 * decided by how the answer begins: after blanks, `[` then `{` begins the array, which must then be
 * whole; anything else is prose and goes on freely.
 */
import { ANY_TEXT, chars, subtract, union } from './char-set.js';
import { arrayExpr } from './container-exprs.js';
import { alt, cls, type Expr, lit, opt, rep, seq } from './expr.js';

/** What may stand before the answer's first character (a model's leading newline). */
const BLANK = chars(' \t\n\r');
/** Prose's characters: an unconstrained string's, and carriage returns. */
const PROSE = union(ANY_TEXT, chars('\r'));

const many = (x: Expr): Expr => rep(x, 0, Number.POSITIVE_INFINITY);

/**
 * Blanks, then prose — text whose first character is not `[`, or `[` then blanks and a character
 * other than `{` — or an array of 1…`maxItems` `item`s (objects: `item` begins with `{`). Empty or
 * blank text is prose. `[` then blanks alone, or `[ {` (a blank between), is neither.
 */
export function proseOrArray(item: Expr, maxItems: number): Expr {
  const rest = many(cls(PROSE));
  const prose = alt(
    seq(cls(subtract(PROSE, union(BLANK, chars('[')))), rest),
    seq(lit('['), many(cls(BLANK)), cls(subtract(PROSE, union(BLANK, chars('{')))), rest),
  );
  return seq(many(cls(BLANK)), opt(alt(prose, arrayExpr([], item, 1, maxItems))));
}
