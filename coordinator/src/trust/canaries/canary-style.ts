/**
 * Character statistics of a canary line made the traffic line's (traffic-shape.ts CharCounts):
 * bold and code spans wrapped around words, then — keeping the length — as many digits, capitals,
 * commas and non-ASCII characters, by swapping words and letters (a word shrinks where a comma
 * went in). These are small edits; the word counts (how many words, function words, sentences)
 * are met by choosing among drawn lines instead (canary-text.ts), since editing words for them
 * turned the text into word salad.
 */
import { type Topic, wordOfLength } from './canary-sentence.js';
import { FUNCTION_WORDS, NAMES, PLACES, TECH } from './canary-words.js';
import type { CharCounts } from './traffic-shape.js';

const ACCENTED: Record<string, string> = { a: 'á', e: 'é', i: 'í', o: 'ö', u: 'ü', n: 'ñ', c: 'ç' };
/** Common CJK characters, for lines that are mostly outside ASCII. */
const CJK =
  '的是不了人我在有他这中大来上个国到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可她里后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经头面公同三已老从动两长知民样现分将外但身些与高意进把法此实回二理美点月明其种声全工己话儿者向情部正名定女问力机给等几很业最间新什打便位因重被走电四第门相次东政海口使教西再平真听世气信北少关并内加化由却代军产入先山五太水万市眼体别处总才场师书比住员九笑性通目华报立马命张活难神数件安表原车白应路期叫死常提感金何更反合放做系计或司利受光王果亲界及今京务制解各任至清物台象记边共风战干接它许八特觉望直服毛林题建南度统色字请交爱让认算论百吃义科怎元社术结六功指思非流每青管夫连远资队跟带花快条院变联言权往展该领传近留红治决周保达办运武半候七必城父强步完革深区即求品士转量空甚众技轻程告江语英基派满式';
const TYPOGRAPHIC: Record<string, string> = { "'": '’', '-': '–', '"': '”' };
/** Words written with letters outside ASCII, as names and loanwords bring them. */
const ACCENTED_WORDS = `
  Zoë São José café Köln über déjà naïve Björn crème señor Chloé André Renée résumé Müller Málaga
  Zürich façade piñata Gödel Dvořák jalapeño Bogotá Québec Łódź Brontë Chávez Peña Iñaki Jürgen
  François Ångström
`
  .trim()
  .split(/\s+/);
/** Proper nouns: names, places, technologies (only letters). */
const PROPER = [...NAMES, ...PLACES, ...TECH].filter((w) => /^[A-Za-z]+$/.test(w));
const upperIn = (word: string) => [...word].filter((c) => c >= 'A' && c <= 'Z').length;
const wideIn = (word: string) => [...word].filter((c) => c > '\x7f').length;
const FUNCTION: ReadonlySet<string> = new Set(FUNCTION_WORDS);
const isFunction = (word: string) => FUNCTION.has(word.toLowerCase());
const DETERMINER_SLOTS = new Set([
  'a',
  'the',
  'my',
  'your',
  'our',
  'this',
  'that',
  'some',
  'every',
  'each',
  'any',
  'one',
]);
/** Rounds of adjustment per count: enough for any line a canary carries, bounded all the same. */
const GUARD = 512;

/**
 * `body` with `bold` **spans** and `ticks` `spans` around words, 4 and 2 characters each longer;
 * with `first`, the first span around the first word.
 */
export function withSpans(
  body: string,
  bold: number,
  ticks: number,
  random: () => number,
  first = false,
): string {
  const words = body.split(' ');
  const free = words.map((_, i) => i).filter((i) => /^[\p{L}\p{N}]/u.test(words[i]!));
  for (let k = 0; k < bold + ticks && free.length > 0; k++) {
    const at = first && k === 0 ? 0 : Math.floor(random() * free.length);
    const i = free.splice(at, 1)[0]!;
    const word = words[i]!;
    const cut = word.search(/[^\p{L}\p{N}_'-]/u);
    const core = cut < 0 ? word : word.slice(0, cut);
    const rest = cut < 0 ? '' : word.slice(cut);
    words[i] = k < bold ? `**${core}**${rest}` : `\`${core}\`${rest}`;
  }
  return words.join(' ');
}

/**
 * `line` with `target`'s counts, as near as swapping words and letters gets them, its length
 * unchanged. The first `from` characters (indent, marker) are left alone.
 */
export function withCounts(
  line: string,
  target: CharCounts,
  topic: Topic,
  random: () => number,
  from = 0,
): string {
  const head = line.slice(0, from);
  const body = line.slice(from);
  if (target.wide > body.length / 2) return head + cjk(body.length, random);
  const edit = new Edit(body, head, topic, random);
  edit.digits(target.digits);
  edit.upper(target.upper);
  edit.commas(target.commas);
  edit.wide(target.wide);
  return head + edit.text();
}

/** A line being adjusted: its characters, and the head's counts (which count but don't change). */
class Edit {
  readonly #c: string[];
  readonly #head: string;
  readonly #topic: Topic;
  readonly #random: () => number;

  constructor(body: string, head: string, topic: Topic, random: () => number) {
    this.#c = [...body];
    this.#head = head;
    this.#topic = topic;
    this.#random = random;
  }

  text(): string {
    return this.#c.join('');
  }

  #count(test: (c: string) => boolean): number {
    let n = 0;
    for (const c of this.#c) if (test(c)) n++;
    for (const c of this.#head) if (test(c)) n++;
    return n;
  }

  #pick<T>(items: readonly T[]): T | undefined {
    return items.length === 0 ? undefined : items[Math.floor(this.#random() * items.length)];
  }

  /** Runs of ASCII letters and where each starts. */
  #letterWords(): { at: number; text: string }[] {
    const out: { at: number; text: string }[] = [];
    let start = -1;
    for (let i = 0; i <= this.#c.length; i++) {
      const letter = i < this.#c.length && /[A-Za-z]/.test(this.#c[i]!);
      if (letter && start < 0) start = i;
      if (!letter && start >= 0) {
        out.push({ at: start, text: this.#c.slice(start, i).join('') });
        start = -1;
      }
    }
    return out;
  }

  #replace(at: number, length: number, text: string): void {
    this.#c.splice(at, length, ...text);
  }

  /** A word of `length` in the case of `like` (lowercase, Capitalized, UPPER). */
  #word(length: number, like: string): string {
    const word = length === 1 ? 'a' : wordOfLength(length, this.#topic, this.#random).toLowerCase();
    if (like.length > 1 && like === like.toUpperCase()) return word.toUpperCase();
    return /^[A-Z]/.test(like) ? word.charAt(0).toUpperCase() + word.slice(1) : word;
  }

  /** Some word `delta` characters longer (or shorter): the length given back after an edit. */
  #resize(delta: number, avoid = -1): boolean {
    const words = this.#letterWords().filter((w) => {
      const n = w.text.length + delta;
      return n >= 2 && n <= 12 && w.text.length >= 2 && (avoid < w.at || avoid >= w.at + w.text.length);
    });
    const w = this.#pick(words);
    if (!w) return false;
    this.#replace(w.at, w.text.length, this.#word(w.text.length + delta, w.text));
    return true;
  }

  digits(target: number): void {
    const isDigit = (c: string) => c >= '0' && c <= '9';
    for (
      let g = 0, d = this.#count(isDigit) - target;
      d !== 0 && g < GUARD;
      g++, d = this.#count(isDigit) - target
    ) {
      if (d > 0) {
        // A number becomes a word of its length ("42" → "my"), else a digit a letter.
        const text = this.#c.join('');
        // A number becomes a word, its % or $ with it ("5%" → "an").
        const number = /\$?\b\d+\b%?/.exec(text);
        const digitsIn = number ? number[0].replace(/\D/g, '').length : 0;
        if (number && digitsIn <= d) {
          this.#replace(number.index, number[0].length, this.#word(number[0].length, 'a'));
          continue;
        }
        const at = this.#c.findIndex(isDigit);
        this.#c[at] = 'aeo'.charAt(Math.floor(this.#random() * 3));
        continue;
      }
      const need = -d;
      const all = this.#letterWords().filter(
        (w, i) => i > 0 && /^[a-z]+$/.test(w.text) && w.text.length <= need,
      );
      // Numbers stand where determiners do: "the cats" → "100 cats".
      const determiners = all.filter((w) => DETERMINER_SLOTS.has(w.text));
      const w = this.#pick(determiners.length > 0 ? determiners : all);
      if (w) {
        let n = `${1 + Math.floor(this.#random() * 9)}`;
        while (n.length < w.text.length) n += Math.floor(this.#random() * 10);
        this.#replace(w.at, w.text.length, n);
        continue;
      }
      // A longer word becomes a digit and a word: "cats" → "3 ox".
      const long = this.#pick(this.#letterWords().filter((x, i) => i > 0 && /^[a-z]{4,}$/.test(x.text)));
      if (!long) return;
      const digit = String(1 + Math.floor(this.#random() * 9));
      this.#replace(long.at, long.text.length, `${digit} ${this.#word(long.text.length - 2, 'a')}`);
    }
  }

  upper(target: number): void {
    const isUpper = (c: string) => c >= 'A' && c <= 'Z';
    for (
      let g = 0, d = this.#count(isUpper) - target;
      d !== 0 && g < GUARD;
      g++, d = this.#count(isUpper) - target
    ) {
      if (d < 0) {
        const words = this.#letterWords().filter((w, i) => i > 0 && /^[a-z]/.test(w.text));
        // A name, a place or a technology of the same length where a noun was ("my python").
        const named = words.filter(
          (w) => !isFunction(w.text) && PROPER.some((p) => p.length === w.text.length && upperIn(p) <= -d),
        );
        const swap = this.#random() < 0.8 ? this.#pick(named) : undefined;
        if (swap) {
          const fits = PROPER.filter((p) => p.length === swap.text.length && upperIn(p) <= -d);
          this.#replace(swap.at, swap.text.length, this.#pick(fits)!);
          continue;
        }
        const w = this.#pick(words);
        if (!w) return;
        const acronym = -d >= w.text.length && w.text.length <= 4 && this.#random() < 0.4;
        for (let k = 0; k < (acronym ? w.text.length : 1); k++)
          this.#c[w.at + k] = this.#c[w.at + k]!.toUpperCase();
        continue;
      }
      // Capitals go in this order: inside a sentence, then at a sentence's start; "I" stays.
      const spots = this.#c.map((c, i) => (isUpper(c) ? i : -1)).filter((i) => i >= 0);
      const pronoun = (i: number) => this.#c[i] === 'I' && !/[A-Za-z]/.test(this.#c[i + 1] ?? '');
      const starts = (i: number) => i === 0 || /[.!?]\s$/.test(this.#c.slice(Math.max(0, i - 2), i).join(''));
      const inner = spots.filter((i) => !pronoun(i) && !starts(i));
      const sentence = spots.filter((i) => !pronoun(i) && i > 0);
      const at = this.#pick(inner) ?? this.#pick(sentence) ?? this.#pick(spots);
      if (at === undefined) return;
      this.#c[at] = this.#c[at]!.toLowerCase();
    }
  }

  commas(target: number): void {
    const isComma = (c: string) => c === ',';
    for (
      let g = 0, d = this.#count(isComma) - target;
      d !== 0 && g < GUARD;
      g++, d = this.#count(isComma) - target
    ) {
      if (d < 0) {
        const spots = this.#letterWords()
          .slice(0, -1)
          .map((w) => w.at + w.text.length)
          .filter((i) => this.#c[i] === ' ');
        const at = this.#pick(spots);
        if (at === undefined) return;
        this.#c.splice(at, 0, ',');
        if (!this.#resize(-1, at)) {
          this.#c.splice(at, 1);
          return;
        }
        continue;
      }
      const at = this.#c.indexOf(',');
      this.#c.splice(at, 1);
      if (!this.#resize(1)) {
        this.#c.splice(at, 0, ',');
        return;
      }
    }
  }

  /** Non-ASCII: typographic quotes and dashes, words with accents of the same length, then accents. */
  wide(target: number): void {
    const isWide = (c: string) => c > '\x7f';
    for (
      let g = 0, d = this.#count(isWide) - target;
      d < 0 && g < GUARD;
      g++, d = this.#count(isWide) - target
    ) {
      const typographic = this.#c.map((c, i) => (TYPOGRAPHIC[c] ? i : -1)).filter((i) => i >= 0);
      const at = this.#pick(typographic);
      if (at !== undefined && this.#random() < 0.6) {
        this.#c[at] = TYPOGRAPHIC[this.#c[at]!]!;
        continue;
      }
      const words = this.#letterWords().filter(
        (w, i) => i > 0 && ACCENTED_WORDS.some((a) => a.length === w.text.length),
      );
      const w = this.#pick(words);
      if (w && this.#random() < 0.7) {
        const fits = ACCENTED_WORDS.filter((a) => a.length === w.text.length && wideIn(a) <= -d);
        const word = this.#pick(fits);
        if (word) {
          this.#replace(w.at, w.text.length, word);
          continue;
        }
      }
      const letters = this.#c.map((c, i) => (ACCENTED[c] ? i : -1)).filter((i) => i >= 0);
      const letter = this.#pick(letters);
      if (letter === undefined) return;
      this.#c[letter] = ACCENTED[this.#c[letter]!]!;
    }
  }
}

function cjk(length: number, random: () => number): string {
  let out = '';
  for (let i = 0; i < length; i++) {
    out +=
      i > 0 && i % (8 + Math.floor(random() * 10)) === 0
        ? '，'
        : CJK.charAt(Math.floor(random() * CJK.length));
  }
  return length > 1 ? `${out.slice(0, -1)}。` : out;
}
