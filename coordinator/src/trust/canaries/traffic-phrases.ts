/**
 * The phrases of a model's traffic, for canary text (issue 29): an order-2 word chain over the
 * sentences of its prose and list lines, one chain per register (system, user, assistant, tool,
 * prompt, list; tool descriptions count as system), and one over whole code lines and one over
 * whole data lines. A canary sentence walked from it has the traffic's own words, in the traffic's
 * proportions and order, where template sentences (canary-sentence.ts) had a generator's words
 * that a classifier of word statistics told apart.
 *
 * k-anonymous: a step of the chain (two words and the next) is walked only once at least
 * `minRequests` distinct requests took it, and a word is used alone (to fill a line) only once
 * that many requests used it; no phrase rarer than that can come out of a canary. The caller
 * notes only requests whose client allows the text to be seen by other nodes (OpenRouter's
 * `data_collection`), and canaries go to the nodes that serve the same model the text was sent
 * to. Memory is bounded: steps are counted in two generations, the older dropped when the newer
 * fills (`maxSteps`), so what is learnt follows the traffic.
 */

import { type Register, registerOf } from './canary-templates.js';
import { lineKindOf } from './text-shape.js';

/** Distinct requests a step or a word must come from before a canary may use it. */
export const DEFAULT_MIN_REQUESTS = 3;
/** Steps counted per generation, per model; about 100 bytes each. */
export const DEFAULT_MAX_STEPS = 40_000;
/** Words in a sentence at most (a walk that does not end is cut). */
const MAX_WORDS = 60;
/** Walks drawn for a code or data line, the nearest in length kept. */
const LINE_WALKS = 12;
/** Characters of a request's text read, at most (a long document teaches nothing more). */
const MAX_TEXT_CHARS = 16_384;
/** Separates the two words of a state; never in a word (words are split on white space). */
const SEP = ' ';
const START = '';
const END = '\u0000';

type Counts = Map<string, Map<string, number>>;

class Generation {
  /** State ("w1 w2") → next word → requests that took the step. */
  readonly steps: Counts = new Map();
  /** Word → requests that used it. */
  readonly words = new Map<string, number>();
  size = 0;
}

/** A state's usable next words: each with its weight (requests) and a hash of it. */
type Nexts = { words: string[]; weights: number[]; hashes: Uint32Array };

/** One register's chain. */
class Chain {
  #current = new Generation();
  #previous = new Generation();
  readonly #maxSteps: number;
  readonly #minRequests: number;
  /** Usable next words per state walked since the last note. */
  readonly #nexts = new Map<string, Nexts>();
  /** Usable words by length, rebuilt after new notes when a word is next asked for. */
  #byLength: Map<number, Nexts> | undefined;

  constructor(maxSteps: number, minRequests: number) {
    this.#maxSteps = maxSteps;
    this.#minRequests = minRequests;
  }

  /** Counts one request's steps and words (each once, however often the request repeats it). */
  note(steps: ReadonlySet<string>, words: ReadonlySet<string>): void {
    if (this.#current.size + steps.size > this.#maxSteps) {
      this.#previous = this.#current;
      this.#current = new Generation();
    }
    const g = this.#current;
    for (const step of steps) {
      const cut = step.lastIndexOf(SEP);
      const state = step.slice(0, cut);
      const next = step.slice(cut + 1);
      let nexts = g.steps.get(state);
      if (!nexts) {
        nexts = new Map();
        g.steps.set(state, nexts);
      }
      const n = nexts.get(next);
      if (n === undefined) g.size++;
      nexts.set(next, (n ?? 0) + 1);
    }
    for (const word of words) g.words.set(word, (g.words.get(word) ?? 0) + 1);
    this.#nexts.clear();
    this.#byLength = undefined;
  }

  /**
   * A sentence walked from the chain, or undefined when no sentence start is usable yet. Each
   * step is a weighted rendezvous draw keyed by one number drawn from `random`: the same draw
   * walks the same sentence while the counts move a little (a recurring line's seeded source
   * gives the same text in every canary, as traffic repeats its own).
   */
  sentence(random: () => number, sentence = true): string | undefined {
    const seed = Math.floor(random() * 4294967296);
    const out: string[] = [];
    let a = START;
    let b = START;
    for (;;) {
      if (out.length >= MAX_WORDS) return undefined;
      const next = choose(this.#usable(`${a}${SEP}${b}`), mix(seed, out.length));
      // Only whole sentences: a walk that can't reach a usable end would be the common prefix of
      // rarer sentences — a substring of some client's text, which a node replaying that text's
      // prompt could pass off as this canary's.
      if (next === undefined) return undefined;
      if (next === END) break;
      out.push(next);
      a = b;
      b = next;
    }
    const text = out.join(' ');
    if (!sentence) return text;
    return /[.!?:]$/.test(text) ? text : `${text.replace(/[,;]$/, '')}.`;
  }

  /** A word of `length` characters that enough requests used, or undefined. */
  word(length: number, random: () => number): string | undefined {
    this.#byLength ??= this.#wordsByLength();
    const fits = this.#byLength.get(length);
    return fits ? choose(fits, mix(Math.floor(random() * 4294967296), 0), false) : undefined;
  }

  #wordsByLength(): Map<number, Nexts> {
    const requests = new Map(this.#previous.words);
    for (const [word, n] of this.#current.words) requests.set(word, (requests.get(word) ?? 0) + n);
    const lists = new Map<number, string[]>();
    for (const [word, n] of requests) {
      if (n < this.#minRequests || !/^[\p{L}'-]+$/u.test(word)) continue;
      const list = lists.get(word.length) ?? [];
      list.push(word);
      lists.set(word.length, list);
    }
    const out = new Map<number, Nexts>();
    for (const [length, words] of lists)
      out.set(
        length,
        nextsOf(
          words,
          words.map(() => 1),
        ),
      );
    return out;
  }

  /** `state`'s next words that at least minRequests requests took. */
  #usable(state: string): Nexts {
    let nexts = this.#nexts.get(state);
    if (nexts) return nexts;
    const counts = new Map(this.#previous.steps.get(state));
    for (const [word, n] of this.#current.steps.get(state) ?? [])
      counts.set(word, (counts.get(word) ?? 0) + n);
    const words: string[] = [];
    const weights: number[] = [];
    for (const [word, n] of counts) {
      if (n < this.#minRequests) continue;
      words.push(word);
      weights.push(n);
    }
    nexts = nextsOf(words, weights);
    this.#nexts.set(state, nexts);
    return nexts;
  }
}

function nextsOf(words: string[], weights: number[]): Nexts {
  const hashes = new Uint32Array(words.length);
  words.forEach((w, i) => {
    hashes[i] = hashOf(w);
  });
  return { words, weights, hashes };
}

/**
 * The next word by weighted rendezvous: each word's key −ln(u)/weight with u a hash of the word
 * and `key`, the least wins. As likely as drawing in proportion to the weights, and stable: for
 * one key, a word wins until the weights change enough to pass another.
 */
function choose(nexts: Nexts, key: number, weighted = true): string | undefined {
  let best: string | undefined;
  let bestScore = Infinity;
  for (let i = 0; i < nexts.words.length; i++) {
    const u = (mix(key, nexts.hashes[i]!) + 0.5) / 4294967296;
    const score = weighted ? -Math.log(u) / nexts.weights[i]! : u;
    if (score < bestScore) {
      bestScore = score;
      best = nexts.words[i];
    }
  }
  return best;
}

/** A 32-bit mix of two numbers (murmur3's finalizer over their combination). */
function mix(a: number, b: number): number {
  let h = Math.imul(a ^ Math.imul(b, 0x9e3779b1), 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A 32-bit hash of a word (FNV-1a). */
function hashOf(word: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

export type TrafficPhrasesOptions = {
  /** Distinct requests a step or word must come from before a canary may use it. */
  minRequests?: number;
  /** Steps counted per generation, per register. */
  maxSteps?: number;
};

/** Chains of whole lines, walked as one: code and data lines. */
type LineKindOfChain = 'code' | 'data';

/** A model's traffic phrases, by register. */
export class TrafficPhrases {
  readonly #chains = new Map<Register | LineKindOfChain, Chain>();
  readonly #minRequests: number;
  readonly #maxSteps: number;

  constructor(options: TrafficPhrasesOptions = {}) {
    this.#minRequests = Math.max(1, options.minRequests ?? DEFAULT_MIN_REQUESTS);
    this.#maxSteps = Math.max(1, options.maxSteps ?? DEFAULT_MAX_STEPS);
  }

  /** Learns one request's texts: its prompt, or its messages' text by role. */
  note(request: Record<string, unknown>): void {
    const learnt = new Map<Register | LineKindOfChain, { steps: Set<string>; words: Set<string> }>();
    let budget = MAX_TEXT_CHARS;
    const into = (chain: Register | LineKindOfChain) => {
      let sets = learnt.get(chain);
      if (!sets) {
        sets = { steps: new Set(), words: new Set() };
        learnt.set(chain, sets);
      }
      return sets;
    };
    const learn = (register: Register, text: string) => {
      if (budget <= 0) return;
      const read = text.slice(0, budget);
      budget -= read.length;
      for (const line of read.split('\n')) {
        const kind = lineKindOf(line);
        if (kind === 'code' || kind === 'data') {
          const sets = into(kind);
          stepsOf(line.trim(), sets.steps, sets.words);
          continue;
        }
        if (kind !== 'prose' && kind !== 'list') continue;
        const sets = into(kind === 'list' ? 'list' : register);
        const body = kind === 'list' ? line.replace(/^\s*([-*•+]|\d{1,3}[.)])\s+/, '') : line;
        for (const sentence of body.trim().split(/(?<=[.!?])\s+/)) stepsOf(sentence, sets.steps, sets.words);
      }
    };
    if (typeof request.prompt === 'string') learn('prompt', request.prompt);
    // Tool descriptions read as instructions: the system register's.
    if (Array.isArray(request.tools))
      for (const tool of request.tools as { function?: { description?: unknown } }[])
        if (typeof tool?.function?.description === 'string') learn('system', tool.function.description);
    if (Array.isArray(request.messages)) {
      for (const m of request.messages as { role?: unknown; content?: unknown }[]) {
        const register = registerOf(String(m?.role));
        if (typeof m?.content === 'string') learn(register, m.content);
        else if (Array.isArray(m?.content))
          for (const part of m.content as { text?: unknown }[])
            if (typeof part?.text === 'string') learn(register, part.text);
      }
    }
    for (const [register, { steps, words }] of learnt) {
      let chain = this.#chains.get(register);
      if (!chain) {
        chain = new Chain(this.#maxSteps, this.#minRequests);
        this.#chains.set(register, chain);
      }
      chain.note(steps, words);
    }
  }

  /** A sentence of `register` in the traffic's words, or undefined while too little is learnt. */
  sentence(register: Register, random: () => number): string | undefined {
    return this.#chains.get(register)?.sentence(random);
  }

  /**
   * A code or data line (without its indent) about `chars` long, walked whole from the traffic's
   * lines of that kind: the nearest in length of a few walks that `accept` takes, within a fifth
   * of `chars`; undefined when none is.
   */
  line(
    kind: LineKindOfChain,
    chars: number,
    random: () => number,
    accept: (text: string) => boolean = () => true,
  ): string | undefined {
    const chain = this.#chains.get(kind);
    if (!chain) return undefined;
    let best: string | undefined;
    for (let i = 0; i < LINE_WALKS; i++) {
      const walked = chain.sentence(random, false);
      if (walked === undefined || !accept(walked)) continue;
      if (best === undefined || Math.abs(walked.length - chars) < Math.abs(best.length - chars))
        best = walked;
    }
    return best !== undefined && Math.abs(best.length - chars) <= Math.max(4, chars / 5) ? best : undefined;
  }

  /** A word `length` characters long from the traffic (any register), or undefined. */
  word(length: number, random: () => number): string | undefined {
    const chains = [...this.#chains.values()];
    for (let left = chains.length; left > 0; left--) {
      const i = Math.floor(random() * left);
      const word = chains[i]!.word(length, random);
      if (word !== undefined) return word;
      chains[i] = chains[left - 1]!;
    }
    return undefined;
  }
}

/** Adds `sentence`'s steps ("w1 w2 next", from two starts to the end) and words to the sets. */
function stepsOf(sentence: string, steps: Set<string>, words: Set<string>): void {
  const tokens = sentence.split(/\s+/).filter((t) => t !== '' && !t.includes(END));
  if (tokens.length === 0) return;
  let a = START;
  let b = START;
  for (const token of [...tokens, END]) {
    steps.add(`${a}${SEP}${b}${SEP}${token}`);
    if (token !== END) words.add(token.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, ''));
    a = b;
    b = token;
  }
}
