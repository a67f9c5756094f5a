/**
 * A JSON Schema `pattern` (an ECMAScript regular expression, matched anywhere in the string unless
 * anchored) as the expression of the strings it matches. The practical subset: literals and
 * escapes, `.`, classes (`[a-z]`, `[^…]`, `\d \w \s` and their negations), groups (`(…)`, `(?:…)`,
 * `(?<name>…)`), alternation, the quantifiers `? * + {n} {n,} {n,m}` (lazy or not: the same
 * language), and `^`/`$` at the start and end of the pattern or of each of its alternatives.
 * Anything else — lookaround, backreferences, `\b`, `\p{…}`, inline flags — cannot be a grammar
 * of this kind and throws PatternNotSupported with the reason, as do characters above U+FFFF
 * (char-set.ts countable()); classes drop U+0800–U+0FFF beside two-byte characters (the same).
 */
import {
  BMP_TEXT,
  countable,
  DIGITS,
  LINE_TERMINATORS,
  normalize,
  SPACE,
  subtract,
  WORD,
} from './char-set.js';
import { alt, cls, EMPTY, type Expr, lit, type Ranges, rep, seq } from './expr.js';

/** Most repetitions a quantifier may ask for (`{n,m}`): beyond, the grammar would be huge. */
export const MAX_PATTERN_REPEAT = 10_000;

export class PatternNotSupported extends Error {}

/** A parsed piece: an expression, or an anchor (kept apart to check where it stands). */
type Node = { readonly expr: Expr } | { readonly anchor: '^' | '$' };
type Sequence = Node[];

const SYNTAX = '^$\\.*+?()[]{}|/-';

/** The strings `pattern` matches (found anywhere: unanchored ends take any BMP_TEXT around them). */
export function patternExpr(pattern: string): Expr {
  try {
    new RegExp(pattern, 'u');
  } catch {
    throw new PatternNotSupported('it is not a valid regular expression (with the u flag)');
  }
  const parser = new Parser(pattern);
  const alternatives = parser.disjunction();
  if (parser.at < pattern.length) throw new PatternNotSupported(`unexpected '${pattern[parser.at]}'`);
  const any = rep(cls(BMP_TEXT), 0, Number.POSITIVE_INFINITY);
  return alt(
    ...alternatives.map((nodes) => {
      let start = 0;
      let end = nodes.length;
      while (start < end && 'anchor' in nodes[start]! && (nodes[start] as { anchor: string }).anchor === '^')
        start++;
      while (
        end > start &&
        'anchor' in nodes[end - 1]! &&
        (nodes[end - 1] as { anchor: string }).anchor === '$'
      )
        end--;
      const body = nodes.slice(start, end).map((n) => {
        if ('anchor' in n)
          throw new PatternNotSupported(`'${n.anchor}' is only supported at an end of the pattern`);
        return n.expr;
      });
      return seq(start > 0 ? EMPTY : any, ...body, end < nodes.length ? EMPTY : any);
    }),
  );
}

class Parser {
  at = 0;
  constructor(readonly text: string) {}

  /** Alternatives, each a sequence of nodes. */
  disjunction(): Sequence[] {
    const out: Sequence[] = [this.alternative()];
    while (this.text[this.at] === '|') {
      this.at++;
      out.push(this.alternative());
    }
    return out;
  }

  alternative(): Sequence {
    const nodes: Sequence = [];
    while (this.at < this.text.length && this.text[this.at] !== '|' && this.text[this.at] !== ')') {
      const c = this.text[this.at]!;
      if (c === '^' || c === '$') {
        this.at++;
        nodes.push({ anchor: c });
        continue;
      }
      const atom = this.atom();
      nodes.push({ expr: this.quantified(atom) });
    }
    return nodes;
  }

  quantified(atom: Expr): Expr {
    const c = this.text[this.at];
    let min: number;
    let max: number;
    if (c === '*' || c === '+' || c === '?') {
      this.at++;
      [min, max] =
        c === '*' ? [0, Number.POSITIVE_INFINITY] : c === '+' ? [1, Number.POSITIVE_INFINITY] : [0, 1];
    } else if (c === '{' && /^\{\d+(,\d*)?\}/.test(this.text.slice(this.at))) {
      const [whole, a, b] = /^\{(\d+)(?:,(\d*))?\}/.exec(this.text.slice(this.at))!;
      this.at += whole.length;
      min = Number(a);
      max = b === undefined ? min : b === '' ? Number.POSITIVE_INFINITY : Number(b);
      if (Math.max(min, max === Number.POSITIVE_INFINITY ? 0 : max) > MAX_PATTERN_REPEAT)
        throw new PatternNotSupported(`a quantifier above ${MAX_PATTERN_REPEAT}`);
    } else {
      return atom;
    }
    // A lazy quantifier matches the same strings.
    if (this.text[this.at] === '?') this.at++;
    return rep(atom, min, max);
  }

  atom(): Expr {
    const c = this.text[this.at]!;
    if (c === '(') return this.group();
    if (c === '[') return this.characterClass();
    if (c === '.') {
      this.at++;
      return cls(subtract(BMP_TEXT, LINE_TERMINATORS));
    }
    if (c === '\\') {
      const set = this.escape(false);
      if (typeof set === 'number' && set > 0xffff) throw new PatternNotSupported('characters above U+FFFF');
      return typeof set === 'number' ? lit(String.fromCodePoint(set)) : cls(set);
    }
    if ('*+?{'.includes(c)) throw new PatternNotSupported(`a quantifier '${c}' with nothing to repeat`);
    const cp = this.text.codePointAt(this.at)!;
    this.at += cp > 0xffff ? 2 : 1;
    if (cp > 0xffff) throw new PatternNotSupported('characters above U+FFFF');
    return lit(String.fromCodePoint(cp));
  }

  group(): Expr {
    this.at++;
    const rest = this.text.slice(this.at);
    if (rest.startsWith('?:')) this.at += 2;
    else if (/^\?<[A-Za-z_$][\w$]*>/.test(rest)) this.at += rest.indexOf('>') + 1;
    else if (rest.startsWith('?')) throw new PatternNotSupported('lookaround and inline flags');
    const alternatives = this.disjunction();
    if (this.text[this.at] !== ')') throw new PatternNotSupported('an unclosed group');
    this.at++;
    return alt(
      ...alternatives.map((nodes) =>
        seq(
          ...nodes.map((n) => {
            if ('anchor' in n) throw new PatternNotSupported(`'${n.anchor}' inside a group`);
            return n.expr;
          }),
        ),
      ),
    );
  }

  characterClass(): Expr {
    this.at++;
    const negated = this.text[this.at] === '^';
    if (negated) this.at++;
    const ranges: (readonly [number, number])[] = [];
    while (this.text[this.at] !== ']') {
      if (this.at >= this.text.length) throw new PatternNotSupported('an unclosed class');
      const from = this.classAtom();
      if (this.text[this.at] === '-' && this.text[this.at + 1] !== ']' && typeof from === 'number') {
        this.at++;
        const to = this.classAtom();
        if (typeof to !== 'number') throw new PatternNotSupported('a range to a class escape');
        ranges.push([from, to]);
      } else if (typeof from === 'number') ranges.push([from, from]);
      else ranges.push(...from);
    }
    this.at++;
    const set = countable(normalize(ranges));
    if (!set) throw new PatternNotSupported('characters above U+FFFF');
    return cls(negated ? subtract(BMP_TEXT, set) : set);
  }

  classAtom(): number | Ranges {
    if (this.text[this.at] === '\\') return this.escape(true);
    const cp = this.text.codePointAt(this.at)!;
    this.at += cp > 0xffff ? 2 : 1;
    return cp;
  }

  /** An escape at `\`: one code point, or a set (`\d`, …). */
  escape(inClass: boolean): number | Ranges {
    this.at++;
    const c = this.text[this.at++];
    if (c === undefined) throw new PatternNotSupported('a trailing backslash');
    const sets: Record<string, Ranges> = {
      d: DIGITS,
      D: subtract(BMP_TEXT, DIGITS),
      w: WORD,
      W: subtract(BMP_TEXT, WORD),
      s: SPACE,
      S: subtract(BMP_TEXT, SPACE),
    };
    if (sets[c]) return sets[c];
    const controls: Record<string, number> = { t: 9, n: 10, v: 11, f: 12, r: 13 };
    if (controls[c] !== undefined) return controls[c];
    if (c === 'b' && inClass) return 8;
    if (c === '0' && !/\d/.test(this.text[this.at] ?? '')) return 0;
    if (c === 'c' && /[A-Za-z]/.test(this.text[this.at] ?? '')) return this.text.charCodeAt(this.at++) % 32;
    if (c === 'x') return this.hex(/^[0-9a-fA-F]{2}/);
    if (c === 'u') {
      if (this.text[this.at] === '{') {
        const end = this.text.indexOf('}', this.at);
        const cp = Number.parseInt(this.text.slice(this.at + 1, end), 16);
        this.at = end + 1;
        return cp;
      }
      return this.hex(/^[0-9a-fA-F]{4}/);
    }
    if (SYNTAX.includes(c)) return c.codePointAt(0)!;
    if (c === 'b' || c === 'B') throw new PatternNotSupported('word boundaries (\\b, \\B)');
    if (/[1-9k]/.test(c)) throw new PatternNotSupported('backreferences');
    if (c === 'p' || c === 'P') throw new PatternNotSupported('Unicode property escapes (\\p{…})');
    throw new PatternNotSupported(`the escape \\${c}`);
  }

  hex(shape: RegExp): number {
    const [digits] = shape.exec(this.text.slice(this.at)) ?? [];
    if (!digits) throw new PatternNotSupported('a malformed hex escape');
    this.at += digits.length;
    return Number.parseInt(digits, 16);
  }
}
