/**
 * Prose for canaries: `proseLine` fits sentences (canary-sentence.ts) to an exact length and
 * ending — a canary line is as long as the traffic line it stands in for — picking the last
 * sentence among several and growing it by an adjective, an adverb or a closing phrase, so that
 * lines end in sentences rather than in cut words.
 */

import {
  capitalize,
  fixArticles,
  sentenceOf,
  shortLine,
  type Topic,
  wordOfLength,
} from './canary-sentence.js';
import type { Register } from './canary-templates.js';
import { ADJECTIVES } from './canary-words.js';
import { pick } from './seeded-random.js';

/**
 * A line of prose exactly `chars` long ending in `end` ('' for a word's last letter): whole
 * sentences, the last one picked among several to fit best and grown to the exact length by an
 * adjective, an adverb or a closing phrase; a line too short for a sentence is a fragment.
 */
export function proseLine(
  chars: number,
  end: string,
  register: Register,
  topic: Topic,
  random: () => number,
): string {
  if (chars <= 0) return '';
  const short = shortLine(chars, end, random);
  if (short !== undefined) return short;
  const sentences: string[] = [];
  let left = chars;
  // Whole sentences until the room left is what one sentence fills.
  for (let misses = 0; left > LAST_SENTENCE_ROOM && misses < 8; ) {
    const sentence = sentenceFor(register, topic, random);
    const need = sentence.length + (sentences.length > 0 ? 1 : 0);
    if (need > left - MIN_LAST_ROOM) {
      misses++;
      continue;
    }
    sentences.push(sentence);
    left -= need;
  }
  const room = left - (sentences.length > 0 ? 1 : 0);
  const last = lastSentence(room, end, register, topic, random);
  if (last === undefined) {
    const words = sentences
      .join(' ')
      .split(' ')
      .filter((w) => w !== '');
    for (let i = 0; i < 3; i++) words.push(...sentenceFor(register, topic, random).split(' '));
    return fitWords(words, chars, end, topic, random);
  }
  sentences.push(last);
  return sentences.join(' ');
}

/** A sentence of `register`: the traffic's own phrases when learnt (traffic-phrases.ts), else a template's. */
function sentenceFor(register: Register, topic: Topic, random: () => number): string {
  return topic.traffic?.sentence(register, random) ?? sentenceOf(register, topic, random);
}

/** Room the last sentence is picked for: about one sentence. */
const LAST_SENTENCE_ROOM = 110;
/** Room always left for the last sentence. */
const MIN_LAST_ROOM = 24;
/** Sentences tried for the last place. */
const LAST_CANDIDATES = 24;
/** Phrases that close a sentence (before its punctuation), by their length. */
const TAILS = [
  'now',
  'too',
  'here',
  'again',
  'today',
  'please',
  'for me',
  'as well',
  'quickly',
  'in detail',
  'right now',
  'this week',
  'if needed',
  'for my team',
  'if possible',
  'step by step',
  'for a friend',
  'in plain English',
  'for a beginner',
  'without any jargon',
];
const DETERMINER_GROWTH: readonly [RegExp, string][] = [
  [/\bthe (?=[a-z]+\b(?! of))/, 'this '],
  [/\bmy /, 'our '],
  [/\ba (?=[b-df-hj-np-tv-z])/, 'one '],
];

/**
 * The sentence that ends a line: of `room` characters, ending in `end`, on topic; undefined when
 * no sentence is short enough.
 */
function lastSentence(
  room: number,
  end: string,
  register: Register,
  topic: Topic,
  random: () => number,
): string | undefined {
  let best: string | undefined;
  for (let i = 0; i < LAST_CANDIDATES; i++) {
    const sentence = withEnd(sentenceFor(register, topic, random), end);
    if (sentence.length > room) continue;
    if (!best || sentence.length > best.length) best = sentence;
    if (room - best.length <= 12) break;
  }
  if (!best) return undefined;
  return grow(best, room, end, topic, random);
}

/** `sentence` with its closing punctuation replaced by `end`. */
function withEnd(sentence: string, end: string): string {
  return sentence.replace(/[.?!:]+$/, '') + end;
}

/** `sentence` grown to `length`: adjectives before nouns, a closing phrase, a longer determiner. */
function grow(sentence: string, length: number, end: string, topic: Topic, random: () => number): string {
  let out = sentence;
  for (let guard = 0; out.length < length && guard < 12; guard++) {
    const gap = length - out.length;
    if (topic.traffic && gap >= 3) {
      // A word of the traffic's, between two of the sentence's.
      const width = gap - 1 <= 12 ? gap - 1 : Math.min(12, gap - 4);
      const spots = [...out.matchAll(/ (?=\S)/g)].map((m) => m.index! + 1);
      const spot = spots.length > 0 ? pick(spots, random) : 0;
      out = `${out.slice(0, spot)}${wordOfLength(width, topic, random)} ${out.slice(spot)}`;
      continue;
    }
    if (gap >= 4 && gap <= 19 && random() < 0.5) {
      const tails = TAILS.filter((t) => t.length === gap - 1);
      if (tails.length > 0) {
        out = `${out.slice(0, out.length - end.length)} ${pick(tails, random)}${end}`;
        continue;
      }
    }
    if (gap >= 3) {
      // An adjective after a determiner; the gap left is never one character.
      const width = gap - 1 <= 12 ? gap - 1 : Math.min(12, gap - 4);
      const adjectives = [...topic.adjectives, ...ADJECTIVES].filter((a) => a.length === width);
      const at = /\b(?:the|a|an|my|your|our|this|that|their|some) (?=[a-z])/g;
      const spots = [...out.matchAll(at)].map((m) => m.index! + m[0].length);
      if (adjectives.length > 0 && spots.length > 0) {
        const spot = pick(spots, random);
        out = `${out.slice(0, spot)}${pick(adjectives, random)} ${out.slice(spot)}`;
        continue;
      }
      out = `${out.slice(0, out.length - end.length)} ${wordOfLength(width, topic, random)}${end}`;
      continue;
    }
    const swap = DETERMINER_GROWTH.find(([pattern, by]) => {
      const m = pattern.exec(out);
      return m && by.length - m[0].length === gap;
    });
    if (swap) {
      out = out.replace(swap[0], swap[1]);
      continue;
    }
    out = `${out.slice(0, out.length - end.length)}${gap === 1 ? 's' : ' I'}${end}`.slice(0, length);
  }
  return fixArticles(out).slice(0, length).padEnd(length, '.');
}

/** `words` cut and padded to `chars` ending in `end`. */
export function fitWords(
  words: string[],
  chars: number,
  end: string,
  topic: Topic,
  random: () => number,
): string {
  const body = chars - end.length;
  const kept: string[] = [];
  let length = -1;
  for (const word of words) {
    if (length + 1 + word.length > body) break;
    kept.push(word);
    length += word.length + 1;
  }
  // The last word loses its punctuation; the line's own ending goes after it.
  const strip = () => {
    const last = kept.pop();
    if (last === undefined) return;
    const bare = last.replace(/[^\p{L}\p{N}]+$/u, '');
    if (bare) kept.push(bare);
  };
  strip();
  let gap = body - kept.join(' ').length;
  while (gap > 0) {
    if (kept.length === 0) {
      kept.push(capitalize(wordOfLength(Math.min(gap, 12), topic, random)));
    } else if (gap === 1) {
      // One character can't hold a word and its space: give back the last word and fill again.
      const last = kept.pop()!;
      if (kept.length === 0) {
        kept.push(capitalize(wordOfLength(last.length + 1, topic, random)));
      }
    } else {
      const n = gap - 1 <= 12 ? gap - 1 : Math.min(12, gap - 3);
      kept.push(wordOfLength(n, topic, random));
    }
    gap = body - kept.join(' ').length;
  }
  return kept.join(' ') + end;
}
