/**
 * A JSON string of given content: the content is an expression over decoded characters; each is
 * written as JSON writes it (`"` and `\` escaped, controls as `\n`, `\t` or `\u00XX`), so one
 * decoded character is one grammar step and the content's length constraints hold on the parsed
 * string.
 */
import { BMP_TEXT, intersect, subtract } from './char-set.js';
import { alt, cls, type Expr, lit, rep, seq } from './expr.js';

/** The characters JSON must escape inside a string. */
const ESCAPED: readonly (readonly [number, number])[] = [
  [0x00, 0x1f],
  [0x22, 0x22],
  [0x5c, 0x5c],
];

/** `content` as the characters of a JSON string (without its quotes). */
export function jsonEncoded(content: Expr): Expr {
  switch (content.k) {
    case 'lit':
      return lit(JSON.stringify(content.s).slice(1, -1));
    case 'cls': {
      const special = intersect(content.ranges, ESCAPED);
      const escapes: Expr[] = [];
      for (const [a, b] of special) {
        for (let c = a; c <= b; c++) escapes.push(lit(JSON.stringify(String.fromCodePoint(c)).slice(1, -1)));
      }
      return alt(cls(subtract(content.ranges, ESCAPED)), ...escapes);
    }
    case 'seq':
      return seq(...content.xs.map(jsonEncoded));
    case 'alt':
      return alt(...content.xs.map(jsonEncoded));
    case 'rep':
      return rep(jsonEncoded(content.x), content.min, content.max);
    case 'ref':
      throw new Error('a string content has no rule references');
  }
}

/** The JSON string (quotes included) whose decoded content `content` matches. */
export const jsonString = (content: Expr): Expr => seq(lit('"'), jsonEncoded(content), lit('"'));

/** One character of a length-bounded string (BMP_TEXT). */
export const BOUNDED_CHAR: Expr = cls(BMP_TEXT);
