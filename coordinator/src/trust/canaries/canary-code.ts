/**
 * Code lines for canaries: Python-like or C-like statements whose identifiers come from the text's
 * topic words, fitted to the traffic line's length, indentation and last character.
 */
import { fitWords, proseLine } from './canary-prose.js';
import { type Topic, wordOfLength } from './canary-sentence.js';
import { NOUNS, VERBS } from './canary-words.js';
import { pick } from './seeded-random.js';

const PYTHON = [
  'def %verb%_%noun%(%noun%, %noun2%):',
  'def %verb%_%noun%(self, %noun%):',
  'class %Noun%%Noun2%:',
  'return %noun%',
  'return %noun%.%verb%(%noun2%)',
  '%noun% = %verb%_%noun2%(%noun%, %num%)',
  '%noun%_%noun2% = [%noun% for %noun% in %noun2%s if %noun%.%noun2%]',
  'for %noun% in %noun2%s:',
  'if %noun% is None:',
  'if not %noun%_%noun2%:',
  'if %noun%.%noun2% > %num%:',
  'elif %noun% == "%word%":',
  'else:',
  'try:',
  'except %Noun%Error as e:',
  'import %noun%',
  'from %noun% import %verb%_%noun2%',
  'print(f"%word% {%noun%}")',
  'self.%noun% = %noun%',
  '%noun%s.append(%noun2%)',
  'with open("%noun%.txt") as f:',
  'raise ValueError("%word% %noun%")',
  '%noun% = {"%noun2%": %num%, "%word%": None}',
  'while %noun% < %num%:',
  'pass',
];

const C_LIKE = [
  'function %verb%%Noun%(%noun%, %noun2%) {',
  'const %noun% = await %verb%%Noun2%(%noun2%);',
  'const %noun%%Noun2% = %noun%.map((%noun2%) => %noun2%.%noun%);',
  'let %noun% = %num%;',
  'return %noun%;',
  'return %noun%.%verb%(%noun2%);',
  'if (%noun% === null) {',
  'if (!%noun%%Noun2%) return;',
  '} else {',
  '}',
  '};',
  '});',
  'for (const %noun% of %noun2%s) {',
  'import { %verb%%Noun% } from "./%noun%";',
  'console.log("%word%", %noun%);',
  'this.%noun% = %noun2%;',
  'export class %Noun%%Noun2% {',
  'private %noun%: %Noun2%;',
  'throw new Error("%word% %noun%");',
  '%noun%.%verb%(%noun2%, %num%);',
  'public %Noun% get%Noun2%() {',
  'const %noun%: %Noun2%[] = [];',
  'try {',
  '} catch (err) {',
  'await %noun%.%verb%();',
];

const capital = (w: string) => w.charAt(0).toUpperCase() + w.slice(1);

/** A code line exactly `chars` long, starting with `indent`, ending in `end` when it can. */
export function codeLine(
  chars: number,
  end: string,
  indent: string,
  topic: Topic,
  random: () => number,
): string {
  const room = chars - indent.length;
  if (room <= 0) return indent.slice(0, chars);
  if (room <= 3) {
    const closers = CLOSERS.filter((c) => c.length === room && (end === '' || c.endsWith(end)));
    if (closers.length > 0) return indent + pick(closers, random);
  }
  const templates = topic.python ? PYTHON : C_LIKE;
  const ends = (line: string) => (end === '' ? !/[.?!:;,)\]}"']$/.test(line) : line.endsWith(end));
  let best = '';
  for (let i = 0; i < 24; i++) {
    const line = fillCode(pick(templates, random), topic, random);
    if (line.length > room) continue;
    const score = (ends(line) ? 0 : 1000) + (room - line.length);
    const bestScore = best ? (ends(best) ? 0 : 1000) + (room - best.length) : Infinity;
    if (score < bestScore) best = line;
  }
  return indent + fit(best, room, topic, random);
}

/**
 * `line` made `room` long: its names grow (`user` → `user_count`), else a trailing comment, else
 * (a few characters, nothing to grow) spaces.
 */
function fit(line: string, room: number, topic: Topic, random: () => number): string {
  let out = line;
  const mark = topic.python ? '#' : '//';
  if (out === '') {
    if (room >= mark.length + 3)
      return `${mark} ${proseLine(room - mark.length - 1, '', 'user', topic, random)}`;
    return wordOfLength(room, topic, random);
  }
  for (let guard = 0; out.length < room && guard < 8; guard++) {
    const names = [...out.matchAll(/\b[a-z][a-z0-9_]*\b/g)].filter(
      (m) => !KEYWORDS.has(m[0]) && !/["'.]/.test(out.charAt(m.index - 1)),
    );
    if (names.length === 0) break;
    const m = pick(names, random);
    const length = Math.min(m[0].length + room - out.length, m[0].length + 10);
    out = out.slice(0, m.index) + nameOf(length, topic, random) + out.slice(m.index + m[0].length);
  }
  const gap = room - out.length;
  if (gap >= mark.length + 4) {
    const words = Array.from(
      { length: 2 + gap / 4 },
      () => pick(random() < 0.5 ? NOUNS : VERBS, random).split('|')[0]!,
    );
    return `${out}  ${mark} ${fitWords(words, gap - mark.length - 3, '', topic, random)}`;
  }
  return out + ' '.repeat(Math.max(0, gap));
}

/** A name `length` long: a short one of code's own, a word, or words joined in the topic's style. */
function nameOf(length: number, topic: Topic, random: () => number): string {
  const own = CODE_NAMES.filter((n) => n.length === length);
  if (own.length > 0 && random() < 0.6) return pick(own, random);
  if (length <= 12)
    return wordOfLength(length, topic, random)
      .toLowerCase()
      .replace(/[^a-z]/g, '_');
  const first = nameOf(3 + Math.floor(random() * 5), topic, random);
  const rest = nameOf(length - first.length - 1, topic, random);
  if (topic.python) return `${first}_${rest}`;
  return `${first}${rest.charAt(0).toUpperCase()}${rest.slice(1)}${random() < 0.5 ? 's' : 'X'}`;
}

/** Names code is full of. */
const CODE_NAMES = `
  i j k x n f e id df db ok fn el res req err ctx url key row obj arr msg app val idx tmp data item
  user path name rows line text nums args opts node list keys items users value count total lines
  query state props index start config result values params client output buffer records options
  request response filename
`
  .trim()
  .split(/\s+/);

/** Words a name must not replace. */
const KEYWORDS = new Set(
  `
  def class return for in if elif else not is none try except as import from with open print raise
  while pass self function const let await async this new throw catch export private public null
  finally break continue f err
`
    .trim()
    .split(/\s+/),
);

/** Short lines that close a block. */
const CLOSERS = ['}', ')', ']', '};', '})', '],', '},', ');', '});', ')),', '}))', '])', 'end'];

function fillCode(template: string, topic: Topic, random: () => number): string {
  const noun = () => {
    const x = random();
    return x < 0.45 ? pick(CODE_NAMES, random) : x < 0.75 ? pick(topic.nouns, random) : pick(NOUNS, random);
  };
  const verb = () => (random() < 0.6 ? pick(topic.verbs, random) : pick(VERBS, random)).split('|')[0]!;
  const values: Record<string, () => string> = {
    noun,
    noun2: noun,
    Noun: () => capital(noun()),
    Noun2: () => capital(noun()),
    verb,
    word: () => pick(NOUNS, random),
    num: () => `${Math.floor(random() * (random() < 0.7 ? 10 : 1000))}`,
  };
  return template.replace(/%(\w+)%/g, (whole, slot: string) => values[slot]?.() ?? whole);
}
