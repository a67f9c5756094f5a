/**
 * Character and word statistics of a text against fixed word lists: common English, and the
 * canary generator's own lists, as a node reading our source would have them.
 */
import { ADJECTIVES, ADVERBS, NAMES, NOUNS, PLACES, TECH, VERBS } from '../../trust/canaries/canary-words.js';

const FUNCTION_WORDS = new Set(
  `the a an and or but if of to in on at by for with from as is are was were be been being it its this that
  these those i you he she we they me him her us them my your his our their what which who whom how why when
  where not no do does did have has had can could will would should may might must so than then there here
  about into over after before up down out just also very all any some each more most such only own same too`
    .split(/\s+/)
    .filter(Boolean),
);

/** A fixed list of common English words (function words and ~250 frequent others). */
const COMMON_WORDS = new Set([
  ...FUNCTION_WORDS,
  ...`time year people way day man thing woman life child world school state family student group country
  problem hand part place case week company system program question work government number night point
  home water room mother area money story fact month lot right study book eye job word business issue side
  kind head house service friend father power hour game line end member law car city community name
  president team minute idea kid body information back parent face others level office door health person
  art war history party result change morning reason research girl guy moment air teacher force education
  get make go know take see come think look want give use find tell ask seem feel try leave call need
  become put mean keep let begin help talk turn start show hear play run move like live believe hold bring
  happen write provide sit stand lose pay meet include continue set learn lead understand watch follow stop
  create speak read spend grow open walk win offer remember love consider appear buy wait serve die send
  expect build stay fall cut reach kill remain good new first last long great little old big high different
  small large next early young important few public bad able best better sure free true whole clear easy
  hard late simple short quick please thanks example code data file list error question answer text email`
    .split(/\s+/)
    .filter(Boolean),
]);

/** The canary generator's own words, as a node reading the source would list them. */
const GENERATOR_WORDS = new Set(
  [
    ...NOUNS,
    ...ADJECTIVES,
    ...ADVERBS,
    ...NAMES,
    ...PLACES,
    ...TECH,
    ...VERBS.flatMap((v) => v.split('|')),
  ].map((w) => w.toLowerCase()),
);

const COMMON_BIGRAMS = new Set(
  `of the|in the|to the|on the|for the|is a|it is|i have|can you|how do|do i|i am|want to|need to|this is|and the|
  with the|from the|at the|by the|is the|to be|will be|have a|of a|in a|as a|is not|that the|you can|if you|i want|
  what is|how to|there are|there is|i need|my new|for a|it was|i was|going to|would like|like to|how can|help me`
    .split('|')
    .map((b) => b.trim()),
);

/** The statistics of `text`, each named with `prefix`. */
export function textStats(text: string, prefix: string): Record<string, number> {
  const out: Record<string, number> = {};
  const n = Math.max(1, text.length);
  const count = (re: RegExp) => text.match(re)?.length ?? 0;
  const lines = text.split('\n');
  out[`${prefix}logChars`] = Math.log1p(text.length);
  out[`${prefix}lines`] = Math.log1p(lines.length);
  out[`${prefix}blankLines`] = lines.filter((l) => l.trim() === '').length / lines.length;
  out[`${prefix}letters`] = count(/\p{L}/gu) / n;
  out[`${prefix}digits`] = count(/\d/g) / n;
  out[`${prefix}spaces`] = count(/\s/g) / n;
  out[`${prefix}upper`] = count(/\p{Lu}/gu) / n;
  out[`${prefix}punct`] = count(/[.,;:!?'"()-]/g) / n;
  out[`${prefix}codeSymbols`] = count(/[{}()[\];=<>_$|&\\`*#]/g) / n;
  out[`${prefix}nonAscii`] = count(/[^\x00-\x7f]/g) / n;
  out[`${prefix}questions`] = count(/\?/g);
  out[`${prefix}fences`] = count(/```/g);
  out[`${prefix}bold`] = count(/\*\*/g);
  out[`${prefix}listLines`] = lines.filter((l) => /^\s*([-*•]|\d+[.)])\s/.test(l)).length / lines.length;
  const words = text.match(/[A-Za-z']+/g) ?? [];
  const lower = words.map((w) => w.toLowerCase());
  const wn = Math.max(1, words.length);
  out[`${prefix}logWords`] = Math.log1p(words.length);
  const lengths = words.map((w) => w.length);
  const mean = lengths.reduce((s, x) => s + x, 0) / wn;
  out[`${prefix}wordLength`] = mean;
  out[`${prefix}wordLengthSd`] = Math.sqrt(lengths.reduce((s, x) => s + (x - mean) ** 2, 0) / wn);
  out[`${prefix}functionWords`] = lower.filter((w) => FUNCTION_WORDS.has(w)).length / wn;
  out[`${prefix}commonWords`] = lower.filter((w) => COMMON_WORDS.has(w)).length / wn;
  out[`${prefix}generatorWords`] =
    lower.filter((w) => GENERATOR_WORDS.has(w) || GENERATOR_WORDS.has(w.replace(/(es|s|ed|ing|d)$/, '')))
      .length / wn;
  out[`${prefix}typeToken`] = new Set(lower.slice(0, 100)).size / Math.max(1, Math.min(100, lower.length));
  out[`${prefix}repeatWords`] = 1 - new Set(lower).size / wn;
  const sentences = text.split(/[.!?]+(?:\s|$)/).filter((s) => s.trim() !== '');
  out[`${prefix}sentences`] = Math.log1p(sentences.length);
  out[`${prefix}wordsPerSentence`] = words.length / Math.max(1, sentences.length);
  let caps = 0;
  for (let i = 1; i < words.length; i++) if (/^[A-Z]/.test(words[i]!)) caps++;
  out[`${prefix}innerCaps`] = caps / wn;
  let bigrams = 0;
  for (let i = 1; i < lower.length; i++) if (COMMON_BIGRAMS.has(`${lower[i - 1]} ${lower[i]}`)) bigrams++;
  out[`${prefix}commonBigrams`] = bigrams / wn;
  out[`${prefix}lowerStart`] = lines.filter((l) => /^[a-z]/.test(l)).length / lines.length;
  return out;
}
