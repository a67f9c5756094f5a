/**
 * A canary's text in the place of a traffic text: line by line, each of the same kind, length,
 * indentation, marker and ending (traffic-shape.ts), the words generated (canary-prose.ts,
 * canary-code.ts, canary-data.ts). A line whose key recurs in traffic is generated from its own
 * seeded source, so it comes out the same in every canary that carries it; any other line comes
 * from the canary's fresh randomness and is never seen again.
 */
import { codeLine } from './canary-code.js';
import { dataLine } from './canary-data.js';
import { fitWords, proseLine } from './canary-prose.js';
import { type Topic, topicOf, wordOfLength } from './canary-sentence.js';
import { withCounts, withSpans } from './canary-style.js';
import type { Register } from './canary-templates.js';
import { ADJECTIVES, NOUNS } from './canary-words.js';
import { countsOf, LABELS, lineKindOf } from './text-shape.js';
import type { LineKind, LineShape, TextShape } from './traffic-shape.js';

/** Draws of a line that does not read as its kind before the last one is kept. */
const KIND_TRIES = 6;

export type TextSources = {
  /** The canary's fresh randomness. */
  random: () => number;
  /** The seeded source of a recurring text's key; undefined for a text seen once. */
  sharedRandom: (key: number) => (() => number) | undefined;
  /** The topic of the canary's fresh lines. */
  topic: Topic;
  /**
   * The text made for a recurring text's key the first time (`make` then), so that it is the same
   * in every canary though the traffic phrases it was walked from move on.
   */
  recall: (key: number, make: () => string) => string;
};

/** Text shaped as `text`, in the words of `register`. */
export function canaryText(text: TextShape, register: Register, sources: TextSources): string {
  // Code lines follow the language of the fence they are in (```python: Python-like), else one
  // style for the whole text, chosen by its first code line's key (the same text, the same style).
  const firstCode = text.find((l) => l.kind === 'code');
  let python: boolean | undefined = firstCode ? firstCode.key % 2 === 0 : undefined;
  return text
    .map((line) => {
      if (line.kind === 'fence') python = line.marker.length > 3 ? /py/i.test(line.marker) : python;
      const seeded = sources.sharedRandom(line.key);
      const random = seeded ?? sources.random;
      // A recurring line gets its words from its own seed, and is made once (recall).
      const own = seeded ? recurring(seeded, sources) : sources.topic;
      const topic = python === undefined ? own : { ...own, python };
      const make = () => {
        if (line.lines > 1) return tailOf(line, register, topic, random);
        if (line.label) return labelled(line, line.label, register, topic, random, sources);
        const head = !seeded && line.head ? sources.sharedRandom(line.head.key) : undefined;
        if (head) return headed(line, line.head!, register, head, topic, random, sources);
        // A line is regenerated until it reads as its kind again (code that looks like prose won't do).
        let out = lineOf(line, register, topic, random);
        for (let i = 0; i < KIND_TRIES && lineKindOf(out) !== line.kind; i++)
          out = lineOf(line, register, topic, random);
        return out;
      };
      return seeded ? sources.recall(line.key, make) : make();
    })
    .join('\n');
}

/** The topic of a recurring text: its own words, the traffic's phrases, no novelty asked. */
function recurring(seeded: () => number, sources: TextSources): Topic {
  const { traffic } = sources.topic;
  return traffic ? { ...topicOf(seeded), traffic } : topicOf(seeded);
}

/** Labels a label unknown to LABELS (text-shape.ts) is replaced with, by length. */
const LABEL_WORDS = [...LABELS];

/**
 * A line opening with a sentence that recurs in traffic: that sentence from its own source (the
 * same in every canary that carries it), the rest fresh.
 */
function headed(
  line: LineShape,
  head: NonNullable<LineShape['head']>,
  register: Register,
  own: () => number,
  topic: Topic,
  random: () => number,
  sources: TextSources,
): string {
  const share = head.chars / line.chars;
  const first = {
    ...line,
    chars: head.chars,
    end: head.end,
    counts: scaled(line.counts, share),
    head: undefined,
  };
  const rest: LineShape = {
    ...line,
    chars: line.chars - head.chars - 1,
    indent: '',
    marker: '',
    start: 'A',
    counts: scaled(line.counts, 1 - share),
    head: undefined,
  };
  if (rest.chars <= 0) return lineOf(line, register, topic, random);
  const opening = sources.recall(head.key, () => lineOf(first, register, recurring(own, sources), own));
  return `${opening} ${lineOf(rest, register, topic, random)}`;
}

/** `counts` for a part of a line (`share` of its characters). */
function scaled(counts: LineShape['counts'], share: number): LineShape['counts'] {
  const out = { ...counts };
  for (const k of Object.keys(out) as (keyof typeof out)[]) out[k] = Math.round(out[k] * share);
  return out;
}

/** A line opening with a label: the label from its own source, the rest as a line of its kind. */
function labelled(
  line: LineShape,
  label: NonNullable<LineShape['label']>,
  register: Register,
  topic: Topic,
  random: () => number,
  sources: TextSources,
): string {
  const own = sources.sharedRandom(label.key) ?? sources.random;
  const fits = LABEL_WORDS.filter((l) => l.length === label.chars);
  const text =
    label.text ??
    (fits.length > 0
      ? fits[Math.floor(own() * fits.length)]!
      : capital(wordOfLength(label.chars, topic, own).toLowerCase()));
  const head = `${line.indent}${text}:`;
  const room = line.chars - head.length - 1;
  if (room <= 0) return head.padEnd(line.chars, ' ').slice(0, line.chars);
  const less = countsOf(head);
  const counts = { ...line.counts };
  for (const k of Object.keys(counts) as (keyof typeof counts)[])
    counts[k] = Math.max(0, counts[k] - less[k]);
  const rest: LineShape = {
    ...line,
    chars: room,
    indent: '',
    start: line.kind === 'prose' ? 'A' : '',
    counts,
    label: undefined,
  };
  return `${head} ${lineOf(rest, register, topic, random)}`;
}

function lineOf(line: LineShape, register: Register, topic: Topic, random: () => number): string {
  const { chars, end, indent, marker } = line;
  switch (line.kind) {
    case 'blank':
      return (indent + ' '.repeat(chars)).slice(0, chars);
    case 'fence':
      return (indent + marker).padEnd(chars, ' ').slice(0, chars);
    case 'code':
    case 'data': {
      const { traffic, novel } = topic;
      const walked = traffic?.line(line.kind, chars - indent.length, random, novel && ((t) => !novel.has(t)));
      if (walked !== undefined) {
        novel?.add(walked);
        return indent + walked;
      }
      return line.kind === 'code'
        ? codeLine(chars, end, indent, topic, random)
        : dataLine(chars, end, indent, topic, random);
    }
  }
  const lead = marker ? `${indent}${marker} ` : indent;
  if (topic.traffic && line.kind !== 'heading') {
    // The traffic's own phrases carry its capitals, digits, marks and spans in its proportions:
    // edited to one line's exact counts they would gain words no client wrote.
    const mark = PUNCTUATION.test(line.start) ? line.start : '';
    const room = chars - lead.length - mark.length;
    if (room < 1) return lead.slice(0, chars).padEnd(chars, ' ');
    const from = line.kind === 'list' ? 'list' : register;
    const { novel } = topic;
    const body = closest(
      line,
      lead.length + mark.length,
      () => proseLine(room, end, from, topic, random),
      novel ? (text) => !novel.has(text) : undefined,
    );
    if (body !== undefined) {
      novel?.add(body);
      return lead + startAs(mark + body, line.start);
    }
    // Every draw was a line given before (a short line of a common phrase): a template's words.
    return lineOf(line, register, { ...topic, traffic: undefined, novel: undefined }, random);
  }
  const { bold, ticks } = line.counts;
  // A line that opens with its bold or code span gets its first span there, not a stray mark.
  const opens = (line.start === '*' && bold > 0) || (line.start === '`' && ticks > 0);
  const mark = PUNCTUATION.test(line.start) && !opens ? line.start : '';
  let spans = bold * 4 + ticks * 2;
  if (chars - lead.length - mark.length - spans < 8) spans = 0;
  const room = chars - lead.length - mark.length - spans;
  if (room < 1) return lead.slice(0, chars).padEnd(chars, ' ');
  const body =
    line.kind === 'heading'
      ? fitWords(
          Array.from({ length: 2 + room / 4 }, () => capital(pickWord(random))),
          room,
          end,
          topic,
          random,
        )
      : closest(line, lead.length + mark.length + spans, () =>
          proseLine(room, end, line.kind === 'list' ? 'list' : register, topic, random),
        );
  const spanned = spans > 0 ? withSpans(body, bold, ticks, random, opens) : body;
  return withCounts(lead + startAs(mark + spanned, line.start), line.counts, topic, random, lead.length);
}

const PUNCTUATION = /^[!-/:-@[-`{-~]$/;
/** Lines drawn for each prose line; the one whose word counts come nearest the traffic line's is kept. */
const CANDIDATES = 12;

/**
 * Of `CANDIDATES` draws, the one whose words — how many, how many function words, short and long
 * ones, sentences and marks — come nearest `line`'s counts (the others, characters, are edited in
 * after; words are chosen, not edited, so that the text stays text). `extra` characters of the
 * line are not in the draws.
 */
function closest(line: LineShape, extra: number, draw: () => string): string;
function closest(
  line: LineShape,
  extra: number,
  draw: () => string,
  accept: ((text: string) => boolean) | undefined,
): string | undefined;
function closest(
  line: LineShape,
  extra: number,
  draw: () => string,
  accept?: (text: string) => boolean,
): string | undefined {
  const target = line.counts;
  const scale = line.chars / Math.max(1, line.chars - extra);
  let best: string | undefined = accept ? undefined : '';
  let bestDistance = Infinity;
  for (let i = 0; i < CANDIDATES; i++) {
    const text = draw();
    if (accept && !accept(text)) continue;
    const c = countsOf(text);
    const distance =
      Math.abs(c.words * scale - target.words) +
      Math.abs(c.functionWords * scale - target.functionWords) +
      Math.abs(c.shortWords * scale - target.shortWords) +
      Math.abs(c.longWords * scale - target.longWords) +
      2 * Math.abs(c.stops - target.stops) +
      Math.abs(c.marks - target.marks);
    if (distance < bestDistance) {
      best = text;
      bestDistance = distance;
    }
    if (distance === 0) break;
  }
  return best;
}

/** `text` starting as `start` says: a lowercase or capital letter, a digit. */
function startAs(text: string, start: string): string {
  if (start === 'a') return text.charAt(0).toLowerCase() + text.slice(1);
  if (start === 'A') return text.charAt(0).toUpperCase() + text.slice(1);
  if (start === '0') {
    const word = /^[^\s]+/.exec(text)?.[0] ?? '';
    let digits = '';
    for (let i = 0; i < word.length; i++) digits += i === 0 ? '1' : '0';
    return /^[\p{L}]+$/u.test(word) && word.length <= 4
      ? digits + text.slice(word.length)
      : `1${text.slice(1)}`;
  }
  return text;
}

/**
 * The tail of a long text: `line.lines` lines of its kind, a few of them blank, together exactly
 * `line.chars` long with the newlines between them.
 */
function tailOf(line: LineShape, register: Register, topic: Topic, random: () => number): string {
  const count = line.lines;
  let left = line.chars - (count - 1);
  const blank = (i: number) => i > 0 && i < count - 1 && line.kind !== 'code' && random() < 0.15;
  const kinds: LineKind[] = Array.from({ length: count }, (_, i) => (blank(i) ? 'blank' : line.kind));
  const filled = kinds.filter((k) => k !== 'blank').length;
  const out: string[] = [];
  let remaining = filled;
  for (let i = 0; i < count; i++) {
    if (kinds[i] === 'blank') {
      out.push('');
      continue;
    }
    const share = remaining === 1 ? left : Math.max(0, Math.round((left / remaining) * (0.5 + random())));
    const chars = Math.min(left, share);
    left -= chars;
    remaining--;
    const end = i === count - 1 ? line.end : line.kind === 'prose' || line.kind === 'list' ? '.' : '';
    const indent = line.kind === 'code' && random() < 0.6 ? '    '.repeat(1 + Math.floor(random() * 2)) : '';
    const marker = line.kind === 'list' ? '-' : line.kind === 'heading' ? '##' : '';
    const part = (n: number) => Math.round((n * chars) / Math.max(1, line.chars));
    const c = line.counts;
    const counts = {
      digits: part(c.digits),
      upper: part(c.upper),
      wide: part(c.wide),
      commas: part(c.commas),
      stops: part(c.stops),
      marks: part(c.marks),
      words: part(c.words),
      functionWords: part(c.functionWords),
      shortWords: part(c.shortWords),
      longWords: part(c.longWords),
      bold: part(c.bold),
      ticks: part(c.ticks),
    };
    const start = line.kind === 'prose' || line.kind === 'list' ? 'A' : '';
    out.push(
      lineOf({ ...line, chars, end, indent, marker, start, counts, lines: 1 }, register, topic, random),
    );
  }
  return out.join('\n');
}

function pickWord(random: () => number): string {
  const words = random() < 0.7 ? NOUNS : ADJECTIVES;
  return words[Math.floor(random() * words.length)]!;
}

function capital(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}
