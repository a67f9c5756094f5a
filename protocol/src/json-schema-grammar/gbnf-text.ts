/**
 * Expressions written as llama.cpp's GBNF: `root ::= …` and one line per named rule. A
 * sub-expression written more than once (a string's characters, a number) becomes a rule of its own,
 * so a schema of many similar members stays a small grammar.
 */
import type { Expr } from './expr.js';

/** A sub-expression repeated at least this long (in GBNF characters) gets a rule of its own. */
const SHARED_RULE_MIN_CHARS = 24;

/** One code point inside `[…]` or `"…"`: printable ASCII as is, the rest escaped. */
function char(cp: number, inClass: boolean): string {
  const special = inClass ? '[]\\^-' : '"\\';
  const c = String.fromCodePoint(cp);
  if (cp >= 0x20 && cp < 0x7f && !special.includes(c)) return c;
  if (!inClass && special.includes(c)) return `\\${c}`;
  if (cp <= 0xff) return `\\x${cp.toString(16).padStart(2, '0')}`;
  if (cp <= 0xffff) return `\\u${cp.toString(16).padStart(4, '0')}`;
  return `\\U${cp.toString(16).padStart(8, '0')}`;
}

const literal = (s: string): string => `"${[...s].map((c) => char(c.codePointAt(0)!, false)).join('')}"`;

/** The GBNF text of a grammar whose start is `root` and whose references name `rules`. */
export function writeGbnf(root: Expr, rules: ReadonlyMap<string, Expr>): string {
  // Count sub-expressions over every rule, to share the repeated ones.
  const counts = new Map<string, number>();
  const count = (x: Expr): void => {
    if (x.k === 'lit' || x.k === 'cls' || x.k === 'ref') return;
    const key = JSON.stringify(x);
    counts.set(key, (counts.get(key) ?? 0) + 1);
    if ((counts.get(key) ?? 0) > 1) return;
    if (x.k === 'rep') count(x.x);
    else for (const y of x.xs) count(y);
  };
  count(root);
  for (const body of rules.values()) count(body);

  const shared = new Map<string, string>();
  const lines: string[] = [];
  /** `x` as a GBNF expression; `atom`: wrapped in parentheses unless it is one already. */
  const write = (x: Expr, atom: boolean, top = false): string => {
    const key = x.k === 'lit' || x.k === 'cls' || x.k === 'ref' ? '' : JSON.stringify(x);
    if (!top && key && (counts.get(key) ?? 0) > 1) {
      let name = shared.get(key);
      if (name === undefined) {
        const text = write(x, false, true);
        if (text.length < SHARED_RULE_MIN_CHARS) return atom && needsParens(x) ? `(${text})` : text;
        name = `s${shared.size}`;
        shared.set(key, name);
        lines.push(`${name} ::= ${text}`);
      }
      return name;
    }
    let text: string;
    switch (x.k) {
      case 'lit':
        return literal(x.s);
      case 'ref':
        return x.name;
      case 'cls':
        return `[${x.ranges.map(([a, b]) => (a === b ? char(a, true) : `${char(a, true)}-${char(b, true)}`)).join('')}]`;
      case 'rep': {
        const inner = write(x.x, true);
        const { min, max } = x;
        const suffix =
          min === 0 && max === 1
            ? '?'
            : min === 0 && max === Number.POSITIVE_INFINITY
              ? '*'
              : min === 1 && max === Number.POSITIVE_INFINITY
                ? '+'
                : max === Number.POSITIVE_INFINITY
                  ? `{${min},}`
                  : min === max
                    ? `{${min}}`
                    : `{${min},${max}}`;
        return inner + suffix;
      }
      case 'seq':
        text = x.xs.map((y) => write(y, y.k === 'alt')).join(' ');
        break;
      case 'alt':
        if (x.xs.length === 0) throw new Error('an unsatisfiable expression has no GBNF');
        text = x.xs.map((y) => write(y, false)).join(' | ');
        break;
    }
    return atom && needsParens(x) ? `(${text})` : text;
  };

  const body = write(root, false, true);
  const ruleLines = [...rules].map(([name, x]) => `${name} ::= ${write(x, false, true)}`);
  return [`root ::= ${body}`, ...ruleLines, ...lines].join('\n');
}

const needsParens = (x: Expr): boolean => x.k === 'seq' || x.k === 'alt' || x.k === 'rep';
