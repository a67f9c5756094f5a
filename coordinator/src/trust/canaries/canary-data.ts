/**
 * Data lines for canaries — a JSON member, a YAML pair, a table row, a CSV or log line — whose
 * value is fitted so the line is exactly as long as the traffic line it stands in for.
 */
import { fitWords } from './canary-prose.js';
import type { Topic } from './canary-sentence.js';
import { NOUNS, VERBS } from './canary-words.js';
import { pick } from './seeded-random.js';

/** A data line exactly `chars` long, starting with `indent`, ending in `end` when it can. */
export function dataLine(
  chars: number,
  end: string,
  indent: string,
  topic: Topic,
  random: () => number,
): string {
  const room = chars - indent.length;
  if (room <= 0) return indent.slice(0, chars);
  const key = random() < 0.6 ? pick(topic.nouns, random) : pick(NOUNS, random);
  const forms = formsFor(end, key, random);
  for (const form of forms) {
    const line = form(room);
    if (line !== undefined && line.length === room) return indent + line;
  }
  return indent + digits(room, random);

  /** Text of `n` characters for a value: words, or digits for short values. */
  function value(n: number): string {
    if (n <= 4) return digits(n, random);
    const words = Array.from(
      { length: 2 + n / 4 },
      () => pick(random() < 0.7 ? NOUNS : VERBS, random).split('|')[0]!,
    );
    return fitWords(words, n, '', topic, random);
  }

  function formsFor(end: string, key: string, random: () => number): ((n: number) => string | undefined)[] {
    const json = (close: string) => (n: number) => {
      const head = `"${key}": `;
      const rest = n - head.length - close.length;
      if (rest < 1) return undefined;
      if (rest <= 6 || random() < 0.3) return head + digits(rest, random) + close;
      return rest < 3 ? undefined : `${head}"${value(rest - 2)}"${close}`;
    };
    const yaml = (n: number) =>
      n - key.length - 2 >= 1 ? `${key}: ${value(n - key.length - 2)}` : undefined;
    const row = (n: number) => {
      const cells = 2 + Math.floor(random() * 3);
      const inner = n - 1 - cells * 3;
      if (inner < cells) return undefined;
      const parts: string[] = [];
      let left = inner;
      for (let i = 0; i < cells; i++) {
        const width = i === cells - 1 ? left : Math.max(1, Math.floor(inner / cells));
        parts.push(value(width));
        left -= width;
      }
      return `| ${parts.join(' | ')} |`;
    };
    const csv = (n: number) => {
      const fields: string[] = [];
      let left = n;
      while (left > 0) {
        const width = Math.min(left, 1 + Math.floor(random() * 8));
        const field = random() < 0.5 ? digits(width, random) : value(width);
        fields.push(field);
        left -= field.length + 1;
        if (left === 0) fields.push('');
      }
      const line = fields.join(',');
      return line.length === n ? line : undefined;
    };
    const log = (n: number) => {
      const day = 1 + Math.floor(random() * 28);
      const stamp = `2025-${String(1 + Math.floor(random() * 12)).padStart(2, '0')}-${String(day).padStart(2, '0')} ${String(Math.floor(random() * 24)).padStart(2, '0')}:${String(Math.floor(random() * 60)).padStart(2, '0')}:${String(Math.floor(random() * 60)).padStart(2, '0')}`;
      const head = `${stamp} ${pick(['INFO', 'WARN', 'ERROR', 'DEBUG'], random)} `;
      const rest = n - head.length - end.length;
      return rest >= 1 ? head + value(rest) + end : undefined;
    };
    switch (end) {
      case ',':
        return [json(','), json(',')];
      case '}':
      case ']':
        return [
          (n) => {
            const inner = n >= 4 ? json('')(n - 2) : undefined;
            return inner === undefined ? undefined : `${end === '}' ? '{' : '['}${inner}${end}`;
          },
          json(end),
        ];
      case '"':
        return [json(''), log];
      case '':
        return [random() < 0.5 ? yaml : row, csv, yaml, json('')];
      default:
        return [log, json(end)];
    }
  }
}

function digits(n: number, random: () => number): string {
  let out = '';
  for (let i = 0; i < n; i++)
    out += i > 0 && i < n - 1 && random() < 0.15 ? '.' : `${Math.floor(random() * 10)}`;
  return out.replace(/\.(?=\.)/g, '0');
}
