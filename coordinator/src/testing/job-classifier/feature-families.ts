/** The families features belong to, and features narrowed to some of them. */
import type { Features } from './job-features.js';

/**
 * Families of features: `frame` the job frame and request structure (kind, stream, members and
 * their order, values, message roles and counts, lengths, the old pool and " (N)"); `repetition`
 * what recurs across the jobs seen before; `words` character and word statistics of the texts
 * against fixed lists; `whiteBox` overlap with the canary generator's own word lists.
 */
export const FEATURE_FAMILIES = ['frame', 'repetition', 'words', 'whiteBox'] as const;
export type FeatureFamily = (typeof FEATURE_FAMILIES)[number];

const REPETITION = new Set([
  'systemSeen',
  'lastSeen',
  'messagesSeen',
  'prefixSeen',
  'historySeen',
  'requestSeen',
]);
const WORD_CATEGORIES = new Set(['lastEnd', 'lastStart']);
const LENGTHS = /^(last_)?(logChars|lines|logWords)$|^log(System|Last|First)Chars$/;

/** The family a feature belongs to. */
export function familyOf(name: string, categorical: boolean): FeatureFamily {
  if (name.endsWith('generatorWords')) return 'whiteBox';
  if (REPETITION.has(name)) return 'repetition';
  if (categorical) return WORD_CATEGORIES.has(name) ? 'words' : 'frame';
  if (LENGTHS.test(name)) return 'frame';
  return Object.hasOwn(FRAME_NUMBERS, name) || name.startsWith('has_') ? 'frame' : 'words';
}

const FRAME_NUMBERS = {
  logMaxTokens: 1,
  stops: 1,
  stopChars: 1,
  messages: 1,
  userMessages: 1,
  assistantMessages: 1,
  trailingNumber: 1,
  oldPool: 1,
};

/** `features` with only the families in `families`. */
export function only(features: Features, families: readonly FeatureFamily[]): Features {
  const keep = (name: string, categorical: boolean) => families.includes(familyOf(name, categorical));
  return {
    num: Object.fromEntries(Object.entries(features.num).filter(([k]) => keep(k, false))),
    cat: Object.fromEntries(Object.entries(features.cat).filter(([k]) => keep(k, true))),
  };
}
