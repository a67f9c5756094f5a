/**
 * The shapes of recent client chat and completion jobs, per model (issue 29): what canaries are
 * built from (make-canary.ts), so that they carry the same kinds, members, settings and lengths
 * as the model's traffic, in the same proportions. A ring of the last `perModel` shapes per model
 * (memory bounded per job by shape-of.ts's caps), and per model a count of each text key, in the
 * ring and over a longer time (the last `keysPerModel` keys): a canary repeats a text only where
 * traffic repeated one (`sharedRandom`).
 *
 * A shape holds lengths, kinds and keyed hashes (traffic-shape.ts), no text. Text is kept only
 * k-anonymously, and only from clients that allow data collection: the phrases that at least 3
 * distinct requests used (traffic-phrases.ts), and whole lines that at least `verbatimAfter` (10)
 * distinct requests carried (an app's system prompt), which a canary then carries as traffic does.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { seededRandom } from './seeded-random.js';
import { shapeOf } from './shape-of.js';
import { textKeyer } from './text-key.js';
import { TrafficPhrases, type TrafficPhrasesOptions } from './traffic-phrases.js';
import { keysOf, lineKeysOf, type TrafficShape } from './traffic-shape.js';

/** Shapes kept per model: the last ones. */
export const DEFAULT_SHAPES_PER_MODEL = 256;
/** Models kept at most; the one noted least recently goes first. */
export const DEFAULT_MAX_MODELS = 1024;
/**
 * Text keys whose occurrences are counted per model over a longer time than the ring holds jobs:
 * a follow-up like "thanks!" recurs every few hundred jobs, and a canary in its place must recur
 * with it. The least recently seen key goes first.
 */
export const DEFAULT_KEYS_PER_MODEL = 65_536;

export type TrafficShapesOptions = {
  perModel?: number;
  maxModels?: number;
  keysPerModel?: number;
  /**
   * The share of shareable requests whose phrases are learnt (traffic-phrases.ts costs ~100 µs a
   * request on the paid path; a sample has the same phrases in the same proportions).
   */
  learnRate?: number;
  /** Draws for `learnRate` (tests fix it). */
  random?: () => number;
  /** Distinct requests that must carry a line before a canary carries it whole. */
  verbatimAfter?: number;
  /** How the traffic's phrases are learnt (traffic-phrases.ts). */
  phrases?: TrafficPhrasesOptions;
  /** 32 bytes that key the text hashes and seed recurring texts; random by default (tests fix it). */
  secret?: Uint8Array;
};

/** Draws for a shape not yet taken before one already taken will do (the ring is mostly taken). */
const TAKE_TRIES = 16;

type Ring = {
  shapes: { shape: TrafficShape; keys: number[]; taken: boolean }[];
  /** Where the next shape goes once the ring is full. */
  next: number;
  /** How many times each key occurs in the ring's shapes. */
  counts: Map<number, number>;
  /** How many times each key occurred since it was last forgotten (least recently seen first). */
  seen: Map<number, number>;
  /** The words and phrases of the model's traffic, k-anonymous. */
  phrases: TrafficPhrases;
  /** Canary text made per recurring key (least recently used first). */
  recalled: Map<number, string>;
  /** The text of each line that `verbatimAfter` distinct requests carried (least recently used first). */
  verbatim: Map<number, string>;
  /** Keys of fresh canary lines walked from the phrases (the oldest first). */
  given: Set<number>;
};

/**
 * Distinct requests that must carry a line before a canary may carry it whole (an app's system
 * prompt, a template's line): k-anonymity, as for the phrases (traffic-phrases.ts).
 */
export const DEFAULT_VERBATIM_AFTER = 10;
/** The share of shareable requests whose phrases are learnt. */
export const DEFAULT_LEARN_RATE = 1 / 4;
/** Lines longer than this are never kept whole. */
const MAX_VERBATIM_CHARS = 4_096;
/** Recurring texts whose canary text is kept, per model. */
const RECALLED_PER_MODEL = 4_096;
/** Fresh canary lines remembered as given, per model. */
const GIVEN_PER_MODEL = 65_536;

export class TrafficShapes {
  readonly #perModel: number;
  readonly #maxModels: number;
  readonly #keysPerModel: number;
  readonly #secret: Uint8Array;
  readonly #keyOf: (text: string) => number;
  readonly #phrases: TrafficPhrasesOptions;
  readonly #verbatimAfter: number;
  readonly #learnRate: number;
  readonly #chance: () => number;
  /** Per model, in the order last noted (a Map keeps insertion order). */
  readonly #rings = new Map<string, Ring>();

  constructor(options: TrafficShapesOptions = {}) {
    this.#perModel = Math.max(1, options.perModel ?? DEFAULT_SHAPES_PER_MODEL);
    this.#maxModels = Math.max(1, options.maxModels ?? DEFAULT_MAX_MODELS);
    this.#keysPerModel = Math.max(1, options.keysPerModel ?? DEFAULT_KEYS_PER_MODEL);
    this.#secret = options.secret ?? randomBytes(32);
    this.#phrases = options.phrases ?? {};
    this.#verbatimAfter = Math.max(2, options.verbatimAfter ?? DEFAULT_VERBATIM_AFTER);
    this.#learnRate = options.learnRate ?? DEFAULT_LEARN_RATE;
    this.#chance = options.random ?? Math.random;
    const view = new DataView(this.#secret.buffer, this.#secret.byteOffset, this.#secret.byteLength);
    this.#keyOf = textKeyer(view.getUint32(0), view.getUint32(4));
  }

  /**
   * Records the shape of a client job sent to `model`: `request` as the node receives it. Other
   * kinds than chat and completion, and requests that are not well formed, are ignored. Never
   * throws: it runs on a client's request, which a canary's bookkeeping must not fail. With
   * `shareable` false (the client denied data collection) only the shape is kept: no phrase is
   * learnt from it and no line of it kept whole.
   */
  note(
    model: string,
    kind: string,
    request: Record<string, unknown>,
    stream: boolean,
    { shareable = true }: { shareable?: boolean } = {},
  ): void {
    let shape: TrafficShape | undefined;
    try {
      shape = shapeOf(kind, request, stream, this.#keyOf);
    } catch {
      return;
    }
    if (!shape) return;
    let ring = this.#rings.get(model);
    if (ring) this.#rings.delete(model);
    else {
      ring = {
        shapes: [],
        next: 0,
        counts: new Map(),
        seen: new Map(),
        phrases: new TrafficPhrases(this.#phrases),
        recalled: new Map(),
        verbatim: new Map(),
        given: new Set(),
      };
      if (this.#rings.size >= this.#maxModels) this.#rings.delete(this.#rings.keys().next().value!);
    }
    this.#rings.set(model, ring);
    // Each key once per request: counts are of requests.
    const entry = { shape, keys: [...new Set(keysOf(shape))], taken: false };
    if (ring.shapes.length < this.#perModel) ring.shapes.push(entry);
    else {
      for (const key of ring.shapes[ring.next]!.keys) {
        const n = ring.counts.get(key)! - 1;
        if (n === 0) ring.counts.delete(key);
        else ring.counts.set(key, n);
      }
      ring.shapes[ring.next] = entry;
      ring.next = (ring.next + 1) % this.#perModel;
    }
    const crossed = new Set<number>();
    for (const key of entry.keys) {
      ring.counts.set(key, (ring.counts.get(key) ?? 0) + 1);
      const seen = ring.seen.get(key) ?? 0;
      ring.seen.delete(key);
      if (ring.seen.size >= this.#keysPerModel) ring.seen.delete(ring.seen.keys().next().value!);
      ring.seen.set(key, seen + 1);
      if (seen + 1 === this.#verbatimAfter) crossed.add(key);
    }
    // A client that denied data collection lends its request's shape, never its words.
    if (!shareable) return;
    if (crossed.size > 0) this.#keepWhole(ring, kind, request, stream, shape, crossed);
    if (this.#learnRate >= 1 || this.#chance() < this.#learnRate) ring.phrases.note(request);
  }

  /**
   * Keeps the text of the lines whose keys just reached `verbatimAfter` requests: the shape is
   * made again with a keyer that notes the text behind each such key (rare: once per line).
   */
  #keepWhole(
    ring: Ring,
    kind: string,
    request: Record<string, unknown>,
    stream: boolean,
    shape: TrafficShape,
    crossed: Set<number>,
  ): void {
    const lines = lineKeysOf(shape);
    const keyOf = (text: string) => {
      const key = this.#keyOf(text);
      if (crossed.has(key) && lines.has(key) && text.length <= MAX_VERBATIM_CHARS) {
        ring.verbatim.delete(key);
        if (ring.verbatim.size >= RECALLED_PER_MODEL)
          ring.verbatim.delete(ring.verbatim.keys().next().value!);
        ring.verbatim.set(key, text);
      }
      return key;
    };
    try {
      shapeOf(kind, request, stream, keyOf);
    } catch {
      // note() checked the request already; a failure here only loses a line's text.
    }
  }

  /** The phrases learnt from `model`'s traffic, or undefined before any. */
  phrases(model: string): TrafficPhrases | undefined {
    return this.#rings.get(model)?.phrases;
  }

  /**
   * The canary text of the recurring text keyed `key`: made by `make` the first time, then the
   * same while it is kept (the phrases it was walked from move on; the traffic's text does not).
   */
  recall(model: string, key: number, make: () => string): string {
    const ring = this.#rings.get(model);
    const whole = ring?.verbatim.get(key);
    if (whole !== undefined && this.count(model, key) >= this.#verbatimAfter) return whole;
    const recalled = ring?.recalled;
    if (!recalled) return make();
    const text = recalled.get(key) ?? make();
    recalled.delete(key);
    if (recalled.size >= RECALLED_PER_MODEL) recalled.delete(recalled.keys().next().value!);
    recalled.set(key, text);
    return text;
  }

  /** The fresh canary lines given for `model` (traffic-phrases lines are not given twice). */
  novelty(model: string): { has(text: string): boolean; add(text: string): void } | undefined {
    const given = this.#rings.get(model)?.given;
    if (!given) return undefined;
    return {
      has: (text) => given.has(this.#keyOf(text)),
      add: (text) => {
        if (given.size >= GIVEN_PER_MODEL) given.delete(given.values().next().value!);
        given.add(this.#keyOf(text));
      },
    };
  }

  /**
   * A recorded shape of `model` for a canary, each equally likely among those not taken before;
   * undefined when none is recorded. Each client job stands for one canary at most (while others
   * are left): taken twice, a job whose texts all recur elsewhere would give two identical
   * canaries where traffic had one request.
   */
  take(model: string, random: () => number): TrafficShape | undefined {
    const shapes = this.#rings.get(model)?.shapes;
    if (!shapes || shapes.length === 0) return undefined;
    let entry = shapes[Math.floor(random() * shapes.length)]!;
    for (let i = 0; i < TAKE_TRIES && entry.taken; i++) entry = shapes[Math.floor(random() * shapes.length)]!;
    entry.taken = true;
    return entry.shape;
  }

  /** Shapes recorded for `model`. */
  size(model: string): number {
    return this.#rings.get(model)?.shapes.length ?? 0;
  }

  /**
   * How many times the text keyed `key` occurred in `model`'s traffic: in the recorded shapes, or
   * over the longer time the key counts cover, whichever is more.
   */
  count(model: string, key: number): number {
    const ring = this.#rings.get(model);
    return Math.max(ring?.counts.get(key) ?? 0, ring?.seen.get(key) ?? 0);
  }

  /**
   * For a text that occurs more than once in `model`'s recorded traffic (an app's system prompt, a
   * conversation's earlier turns, a template line): a random source seeded from its key and the
   * secret, the same each time, so every canary in its place carries the same generated text.
   * Undefined for a text seen once: a canary's text in its place is fresh.
   */
  sharedRandom(model: string, key: number): (() => number) | undefined {
    if (this.count(model, key) < 2) return undefined;
    return seededRandom(createHmac('sha256', this.#secret).update(`${key}`).digest());
  }
}
