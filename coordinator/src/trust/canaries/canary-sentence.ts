/**
 * Sentences for canaries: a template of the line's register (canary-templates.ts) filled from the
 * word lists around a topic — a few nouns, verbs and adjectives a text keeps coming back to, as
 * real texts do — with common words drawn more often and short words likelier than long ones.
 */
import { type Register, TEMPLATES } from './canary-templates.js';
import {
  ADJECTIVES,
  ADVERBS,
  COMMON_ADJECTIVES,
  COMMON_NOUNS,
  COMMON_VERBS,
  DETERMINERS,
  DOCUMENTS,
  IRREGULAR_PLURALS,
  LANGUAGES,
  NAMES,
  NOUNS,
  PLACES,
  PREPOSITIONS,
  SHORT_REPLIES,
  TECH,
  TIMES,
  VERBS,
} from './canary-words.js';
import { pick } from './seeded-random.js';

/** A text's topic: the few words it keeps coming back to. */
export type Topic = {
  nouns: readonly string[];
  verbs: readonly string[];
  adjectives: readonly string[];
  tech: string;
  name: string;
  place: string;
  language: string;
  /** The code style of its code lines: Python-like, else C-like (JavaScript, TypeScript, Java). */
  python: boolean;
  /**
   * The model's traffic phrases (traffic-phrases.ts), when enough is learnt: prose sentences and
   * filler words come from them rather than from the templates.
   */
  traffic?: TrafficWords | undefined;
  /**
   * Lines of traffic phrases given out before, for a fresh text: a line drawn again is drawn anew
   * (a short line walked from a common phrase would otherwise recur where the traffic's did not).
   */
  novel?: { has(text: string): boolean; add(text: string): void } | undefined;
};

/** What canary prose takes from the traffic's own phrases (traffic-phrases.ts). */
export type TrafficWords = {
  sentence(register: Register, random: () => number): string | undefined;
  word(length: number, random: () => number): string | undefined;
  line(
    kind: 'code' | 'data',
    chars: number,
    random: () => number,
    accept?: (text: string) => boolean,
  ): string | undefined;
};

/** How often a slot takes a topic word rather than any word. */
const TOPICAL = 0.65;

/** How often a content word is one of the most frequent of its kind. */
const FREQUENT = 0.2;
const FREQUENT_OF = new Map<readonly string[], readonly string[]>([
  [NOUNS, COMMON_NOUNS],
  [VERBS, COMMON_VERBS],
  [ADJECTIVES, COMMON_ADJECTIVES],
]);

/**
 * A word of `items`: often one of the most frequent of its kind, else shorter ones likelier (as in
 * text, where the common words are the short ones).
 */
const pickWord = (items: readonly string[], random: () => number): string => {
  const frequent = FREQUENT_OF.get(items);
  if (frequent && random() < FREQUENT) return pick(frequent, random);
  const a = pick(items, random);
  const b = pick(items, random);
  return a.length <= b.length === random() < 0.75 ? a : b;
};

/** A topic for one text: a handful of words it will return to. */
export function topicOf(random: () => number): Topic {
  const few = (items: readonly string[], n: number) =>
    Array.from({ length: n }, () => pickWord(items, random));
  return {
    nouns: few(NOUNS, 2 + Math.floor(random() * 4)),
    verbs: few(VERBS, 2 + Math.floor(random() * 3)),
    adjectives: few(ADJECTIVES, 2 + Math.floor(random() * 2)),
    tech: pick(TECH, random),
    name: pick(NAMES, random),
    place: pick(PLACES, random),
    language: pick(LANGUAGES, random),
    python: random() < 0.5,
  };
}

/** One sentence of `register`, on `topic`. */
export function sentenceOf(register: Register, topic: Topic, random: () => number): string {
  const template = pick(pick(TEMPLATES[register], random), random);
  const text = template.replace(/\{(\w+)\}/g, (_, slot: string) => fill(slot, topic, random));
  // A capital after a sentence's end inside a template ("Sure! Add …").
  return capitalize(fixArticles(text)).replace(
    /([.!?] )([a-z])/g,
    (_, p: string, c: string) => p + c.toUpperCase(),
  );
}

/** A word exactly `length` long (1 … 12), a topic word when one fits. */
export function wordOfLength(length: number, topic: Topic, random: () => number): string {
  const traffic = topic.traffic?.word(length, random);
  if (traffic !== undefined) return traffic;
  const own = topic.nouns.filter((w) => w.length === length);
  if (own.length > 0 && random() < TOPICAL) return pick(own, random);
  const all = BY_LENGTH.get(length);
  if (all) return pick(all, random);
  // Longer than any word: two joined (a compound, as clients write them).
  const first = pick(BY_LENGTH.get(Math.min(8, length - 4)) ?? NOUNS, random);
  return `${first}-${wordOfLength(length - first.length - 1, topic, random)}`;
}

const BY_LENGTH = (() => {
  const map = new Map<number, string[]>();
  const add = (w: string) => {
    if (!/^[a-z]+$/i.test(w)) return;
    const list = map.get(w.length) ?? [];
    list.push(w);
    map.set(w.length, list);
  };
  for (const w of [
    ...NOUNS,
    ...ADJECTIVES,
    ...ADVERBS,
    ...SHORT_REPLIES,
    'a',
    'I',
    'of',
    'to',
    'in',
    'it',
    'is',
  ])
    add(w);
  for (const v of VERBS) add(v.split('|')[0]!);
  return map;
})();

/** Lines of a few characters: a short reply ("ok", "thanks!"), else undefined. */
export function shortLine(chars: number, end: string, random: () => number): string | undefined {
  if (chars > 8) return undefined;
  const fits = SHORT_REPLIES.filter((w) => w.length + end.length === chars);
  if (fits.length === 0) return undefined;
  const word = pick(fits, random);
  return (random() < 0.6 ? capitalize(word) : word) + end;
}

function fill(slot: string, topic: Topic, random: () => number): string {
  const topical = random() < TOPICAL;
  switch (slot) {
    case 'n':
      return topical ? pick(topic.nouns, random) : pickWord(NOUNS, random);
    case 'ns':
      return plural(topical ? pick(topic.nouns, random) : pickWord(NOUNS, random));
    case 'np':
      return nounPhrase(topic, random, false);
    case 'nps':
      return nounPhrase(topic, random, true);
    case 'adj':
      return topical ? pick(topic.adjectives, random) : pickWord(ADJECTIVES, random);
    case 'adv':
      return pickWord(ADVERBS, random);
    case 'v':
    case 'vs':
    case 'ved':
    case 'ving': {
      const verb = topical ? pick(topic.verbs, random) : pickWord(VERBS, random);
      return verbForm(verb, slot);
    }
    case 'pp':
      return `${pick(PREPOSITIONS, random)} ${nounPhrase(topic, random, random() < 0.3)}`;
    case 'topic':
      return random() < 0.3 ? topic.tech : nounPhrase(topic, random, random() < 0.4);
    case 'doc':
      return pick(DOCUMENTS, random);
    case 'name':
      return topical ? topic.name : pick(NAMES, random);
    case 'place':
      return topical ? topic.place : pick(PLACES, random);
    case 'tech':
      return topical ? topic.tech : pick(TECH, random);
    case 'language':
      return topic.language;
    case 'time':
      return pick(TIMES, random);
    case 'day':
      return pick(['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'], random);
    case 'hour':
      return pick(['9am', '10:30', 'noon', '2pm', '3:15', '4pm', '6pm'], random);
    case 'num':
      return random() < 0.6
        ? `${2 + Math.floor(random() * 9)}`
        : pick(['two', 'three', 'four', 'five', 'six', 'ten', 'a few'], random);
    case 'year':
      return `${1950 + Math.floor(random() * 76)}`;
    case 'pct':
      return `${5 + Math.floor(random() * 90)}`;
    case 'dollars':
      return `$${Math.floor(10 ** (1 + random() * 3))}`;
    default:
      return slot;
  }
}

function nounPhrase(topic: Topic, random: () => number, many: boolean): string {
  const noun = random() < TOPICAL ? pick(topic.nouns, random) : pickWord(NOUNS, random);
  const adjective =
    random() < 0.3
      ? `${random() < TOPICAL ? pick(topic.adjectives, random) : pickWord(ADJECTIVES, random)} `
      : '';
  if (many) {
    const det = random() < 0.5 ? '' : `${pick(['the', 'my', 'our', 'these', 'some', 'all the'], random)} `;
    return `${det}${adjective}${plural(noun)}`;
  }
  if (random() < 0.08) return `${topic.name}'s ${adjective}${noun}`;
  return `${pick(DETERMINERS, random)} ${adjective}${noun}`;
}

function plural(noun: string): string {
  return IRREGULAR_PLURALS[noun] ?? suffixS(noun);
}

function suffixS(word: string): string {
  if (/(s|x|z|ch|sh)$/.test(word)) return `${word}es`;
  if (/[^aeiou]y$/.test(word)) return `${word.slice(0, -1)}ies`;
  return `${word}s`;
}

/** A verb's form: base, third person (vs), past (ved), gerund (ving). */
function verbForm(verb: string, form: string): string {
  const [base, s, ed, ing] = verb.split('|') as [string, string?, string?, string?];
  if (form === 'vs') return s ?? suffixS(base);
  if (form === 'ved') {
    if (ed) return ed;
    if (base.endsWith('e')) return `${base}d`;
    if (/[^aeiou]y$/.test(base)) return `${base.slice(0, -1)}ied`;
    return `${base}ed`;
  }
  if (form === 'ving') {
    if (ing) return ing;
    if (base.endsWith('ie')) return `${base.slice(0, -2)}ying`;
    if (/[^e]e$/.test(base)) return `${base.slice(0, -1)}ing`;
    return `${base}ing`;
  }
  return base;
}

/** "a" before a vowel sound becomes "an" (by spelling; close enough). */
export function fixArticles(text: string): string {
  return text.replace(/\b([Aa]) (?=[aeioAEIO]|u(?:n[^i]|p|g|m|l|t))/g, '$1n ');
}

export function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
