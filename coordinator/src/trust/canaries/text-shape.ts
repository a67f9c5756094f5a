/**
 * A text's shape: its lines, each one's length, kind, indentation, structural marker and ending,
 * and a key — never its characters (traffic-shape.ts). The kinds are found by cheap patterns; they
 * need not be right, only the same for a line and the canary line generated in its place.
 */
import { FUNCTION_WORDS } from './canary-words.js';
import type { CharCounts, LineKind, LineShape, TextShape } from './traffic-shape.js';

/** Lines recorded one by one; the rest of a longer text is one tail shape (its `lines` > 1). */
export const MAX_LINES_PER_TEXT = 48;
/** Characters of a text whose lines are recorded one by one, at most (the request path's budget). */
export const MAX_LINE_CHARS_PER_TEXT = 32_768;
/** Characters of a line or tail counted by class; the counts of a longer one are scaled from them. */
const MAX_SCANNED_CHARS = 8_192;
/** Lines of a tail classified to find its kind. */
const TAIL_SAMPLES = 32;
/** Leading whitespace recorded at most. */
const MAX_INDENT = 64;

const FENCE = /^\s*((?:```|~~~)[\w+#.-]{0,20})\s*$/;
const HEADING = /^\s*(#{1,6})\s+\S/;
const LIST = /^\s*([-*•+]|\d{1,3}[.)])\s+\S/;
const JSON_MEMBER = /^\s*["'][^"']{1,80}["']\s*:/;
const CODE_START =
  /^\s*(def |class |import |from \S+ import|return\b|const |let |var |function\b|if\s*\(|for\s*\(|while\s*\(|[{}]|#include|public |private |async |await |SELECT |INSERT |UPDATE |CREATE |print\(|console\.|\/\/|\$ |(?:for|while|if|elif|with|except) .*:\s*$|(?:else|try|finally):|raise |pass\s*$)/;
const DIGIT = 1;
const DATA = 2;
const CODE = 4;
/** Per ASCII character: a digit, a data symbol (`"',:|`), a code symbol (`{}()[];=<>_$|&\\\``). */
const SYMBOL_FLAGS = (() => {
  const flags = new Uint8Array(128);
  for (let c = 48; c <= 57; c++) flags[c] = DIGIT;
  for (const c of `"',:|`) flags[c.charCodeAt(0)]! |= DATA;
  for (const c of '{}()[];=<>_$|&\\`') flags[c.charCodeAt(0)]! |= CODE;
  return flags;
})();
const ENDINGS = '.?!:;,)]}"\'';
/** Labels of prompt formats: structure, not anyone's words, so recorded as they are. */
export const LABELS: ReadonlySet<string> = new Set(
  `
  Q|A|AI|Bot|Tip|Task|Text|Note|Step|User|Input|Title|Topic|Query|Label|Error|Human|Answer|Output|
  Result|Review|Source|Target|Status|Reason|Action|Context|Example|Summary|Subject|Passage|Warning|
  Thought|Question|Category|Response|Document|Sentiment|Assistant|Observation|Translation|Final Answer|
  Instructions|Action Input|System|Customer|Agent|Problem|Solution|Code|Description|Keywords
`
    .trim()
    .split('|')
    .map((s) => s.trim()),
);
/** A line's first sentence (eight characters at least) when another follows it. */
const FIRST_SENTENCE = /^(.{8,}?[.!?])\s+\S/;
/** A label a line opens with: a capitalized word or two and a colon ("Q:", "Final Answer:"). */
const LABEL = /^\s*([A-Z][A-Za-z]{0,19}(?: [A-Za-z]{1,12})?):(?:\s|$)/;

/** The shape of `text` (lines split at '\n'), each line keyed by `keyOf`. */
export function textShapeOf(text: string, keyOf: (text: string) => number): TextShape {
  const lines = text.split('\n');
  const shapes: LineShape[] = [];
  // Lines one by one while both budgets last (lines, characters); the rest is the tail.
  let head = 0;
  for (let chars = 0; head < lines.length; head++) {
    chars += lines[head]!.length + 1;
    const last = head === lines.length - 1;
    if (!last && (head === MAX_LINES_PER_TEXT - 1 || chars > MAX_LINE_CHARS_PER_TEXT)) break;
  }
  for (let i = 0; i < head; i++) shapes.push(lineShapeOf(lines[i]!, keyOf));
  if (head < lines.length) shapes.push(tailShapeOf(lines.slice(head), keyOf));
  return shapes;
}

function lineShapeOf(line: string, keyOf: (text: string) => number): LineShape {
  const { kind, marker } = classify(line);
  const last = line.trimEnd().at(-1) ?? '';
  const indent = (/^[ \t]*/.exec(line)?.[0] ?? '').slice(0, MAX_INDENT);
  const label = (kind === 'prose' || kind === 'data') && LABEL.exec(line)?.[1];
  const first = !label && (kind === 'prose' || kind === 'list') ? FIRST_SENTENCE.exec(line)?.[1] : undefined;
  return {
    ...(first ? { head: { chars: first.length, end: first.at(-1)!, key: keyOf(first) } } : {}),
    ...(label
      ? { label: { chars: label.length, key: keyOf(label), ...(LABELS.has(label) ? { text: label } : {}) } }
      : {}),
    kind,
    chars: line.length,
    indent,
    marker,
    end: kind !== 'blank' && ENDINGS.includes(last) ? last : '',
    start: startOf(line.slice(indent.length + marker.length).trimStart()),
    counts: sampledCounts(line),
    lines: 1,
    key: keyOf(line),
  };
}

/** The class of a text's first character (LineShape.start). */
function startOf(text: string): string {
  const c = text.charAt(0);
  if (c === '') return '';
  if (/[a-z]/.test(c)) return 'a';
  if (/[A-Z]/.test(c)) return 'A';
  if (/[0-9]/.test(c)) return '0';
  return /[!-/:-@[-`{-~]/.test(c) ? c : 'x';
}

const MAX_COUNT = 4096;
const MAX_FUNCTION_WORD = Math.max(...FUNCTION_WORDS.map((w) => w.length));

/** A hash of `text`'s ASCII letters [from, to) lowercased: words looked up without slicing. */
function lowerHash(text: string, from: number, to: number): number {
  let h = 0x811c9dc5;
  for (let i = from; i < to; i++) h = Math.imul(h ^ (text.charCodeAt(i) | 0x20), 0x01000193);
  return h >>> 0;
}
const FUNCTION_WORD_HASHES: ReadonlySet<number> = new Set(
  FUNCTION_WORDS.map((w) => lowerHash(w, 0, w.length)),
);

/** A line's characters by class (CharCounts), in one pass (this runs on every client request). */
export function countsOf(line: string): CharCounts {
  let digits = 0;
  let upper = 0;
  let wide = 0;
  let commas = 0;
  let stops = 0;
  let marks = 0;
  let words = 0;
  let functionWords = 0;
  let shortWords = 0;
  let longWords = 0;
  let stars = 0;
  let ticks = 0;
  let inWord = false;
  let run = -1; // where the current run of ASCII letters started
  for (let i = 0; i <= line.length; i++) {
    const c = i < line.length ? line.charCodeAt(i) : 32;
    const letter = (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
    if (letter && run < 0) run = i;
    if (!letter && run >= 0) {
      const n = i - run;
      if (n <= 3) shortWords++;
      else if (n >= 7) longWords++;
      if (n <= MAX_FUNCTION_WORD && FUNCTION_WORD_HASHES.has(lowerHash(line, run, i))) functionWords++;
      run = -1;
    }
    const space = c === 32 || (c >= 9 && c <= 13) || c === 160;
    if (!space && !inWord) words++;
    inWord = !space;
    if (i === line.length) break;
    if (c >= 48 && c <= 57) digits++;
    else if (c >= 65 && c <= 90) upper++;
    else if (c === 44) commas++;
    else if (c === 46 || c === 63 || c === 33) stops++;
    else if (c === 39 || c === 34 || c === 59 || c === 58 || c === 40 || c === 41 || c === 45) marks++;
    else if (c === 42 && line.charCodeAt(i + 1) === 42) {
      stars++;
      i++;
    } else if (c === 96) ticks++;
    else if (c > 127) wide++;
  }
  const cap = (n: number) => Math.min(n, MAX_COUNT);
  return {
    digits: cap(digits),
    upper: cap(upper),
    wide: cap(wide),
    commas: cap(commas),
    stops: cap(stops),
    marks: cap(marks),
    words: cap(words),
    functionWords: cap(functionWords),
    shortWords: cap(shortWords),
    longWords: cap(longWords),
    bold: Math.min(Math.floor(stars / 2), 16),
    ticks: Math.min(Math.floor(ticks / 2), 16),
  };
}

/**
 * countsOf a text, from its first MAX_SCANNED_CHARS scaled to its length when it is longer: a long
 * paste costs the request path no more than a page.
 */
function sampledCounts(text: string): CharCounts {
  if (text.length <= MAX_SCANNED_CHARS) return countsOf(text);
  const counts = countsOf(text.slice(0, MAX_SCANNED_CHARS));
  const scale = text.length / MAX_SCANNED_CHARS;
  const out = { ...counts };
  for (const k of Object.keys(out) as (keyof CharCounts)[]) {
    if (k !== 'bold' && k !== 'ticks') out[k] = Math.min(MAX_COUNT, Math.round(counts[k] * scale));
  }
  return out;
}

/** The tail of a long text as one shape: its length, line count and most common kind. */
function tailShapeOf(lines: string[], keyOf: (text: string) => number): LineShape {
  const text = lines.join('\n');
  const counts = new Map<LineKind, number>();
  // Its kind by the lines at even steps through it (at most TAIL_SAMPLES: a long paste costs no more).
  const step = Math.max(1, Math.floor(lines.length / TAIL_SAMPLES));
  for (let i = 0; i < lines.length; i += step) {
    const { kind } = classify(lines[i]!);
    if (kind !== 'blank') counts.set(kind, (counts.get(kind) ?? 0) + 1);
  }
  let kind: LineKind = 'prose';
  for (const [k, n] of counts) if (n > (counts.get(kind) ?? 0)) kind = k;
  const last = text.trimEnd().at(-1) ?? '';
  return {
    kind,
    chars: text.length,
    indent: '',
    marker: '',
    end: ENDINGS.includes(last) ? last : '',
    start: startOf(text.trimStart()),
    counts: sampledCounts(text),
    lines: lines.length,
    key: keyOf(text),
  };
}

/** The kind of one line (LineShape.kind). */
export function lineKindOf(line: string): LineKind {
  return classify(line).kind;
}

/** A line's kind, and its structural marker (list bullet, heading hashes, fence). */
function classify(line: string): { kind: LineKind; marker: string } {
  if (line.trim() === '') return { kind: 'blank', marker: '' };
  const fence = FENCE.exec(line);
  if (fence) return { kind: 'fence', marker: fence[1]! };
  const heading = HEADING.exec(line);
  if (heading) return { kind: 'heading', marker: heading[1]! };
  const list = LIST.exec(line);
  if (list) return { kind: 'list', marker: list[1]! };
  let solid = 0;
  let digits = 0;
  let data = 0;
  let symbols = 0;
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c === 32 || c === 9) continue;
    solid++;
    const flags = c < 128 ? SYMBOL_FLAGS[c]! : 0;
    if (flags & DIGIT) digits++;
    if (flags & DATA) data++;
    if (flags & CODE) symbols++;
  }
  const json = /^\s*[[{]/.test(line) && /"\s*:/.test(line);
  if (json || JSON_MEMBER.test(line) || line.trimStart().startsWith('|') || digits >= solid * 0.3) {
    return { kind: 'data', marker: '' };
  }
  if (CODE_START.test(line) || (symbols >= 2 && symbols >= solid * 0.08)) return { kind: 'code', marker: '' };
  if (data >= 3 && data >= solid * 0.15) return { kind: 'data', marker: '' };
  return { kind: 'prose', marker: '' };
}
