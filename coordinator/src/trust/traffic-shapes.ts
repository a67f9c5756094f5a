/**
 * The shapes of recent client chat and completion jobs, per model (issue 29): what canaries are
 * built from (make-canary.ts), so that they carry the same kinds, members, settings and lengths
 * as the model's traffic, in the same proportions. A ring of the last `perModel` shapes per model
 * (memory bounded per job by shape-of.ts's caps), and per model a count of each text key, in the
 * ring and over a longer time (the last `keysPerModel` keys): a canary repeats a text only where
 * traffic repeated one (`sharedRandom`).
 *
 * No text is kept: a shape holds lengths, kinds and keyed hashes (traffic-shape.ts).
 */
import { createHmac, randomBytes } from 'node:crypto';
import { seededRandom } from './seeded-random.js';
import { shapeOf } from './shape-of.js';
import { textKeyer } from './text-key.js';
import { keysOf, type TrafficShape } from './traffic-shape.js';

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
};

export class TrafficShapes {
  readonly #perModel: number;
  readonly #maxModels: number;
  readonly #keysPerModel: number;
  readonly #secret: Uint8Array;
  readonly #keyOf: (text: string) => number;
  /** Per model, in the order last noted (a Map keeps insertion order). */
  readonly #rings = new Map<string, Ring>();

  constructor(options: TrafficShapesOptions = {}) {
    this.#perModel = Math.max(1, options.perModel ?? DEFAULT_SHAPES_PER_MODEL);
    this.#maxModels = Math.max(1, options.maxModels ?? DEFAULT_MAX_MODELS);
    this.#keysPerModel = Math.max(1, options.keysPerModel ?? DEFAULT_KEYS_PER_MODEL);
    this.#secret = options.secret ?? randomBytes(32);
    const view = new DataView(this.#secret.buffer, this.#secret.byteOffset, this.#secret.byteLength);
    this.#keyOf = textKeyer(view.getUint32(0), view.getUint32(4));
  }

  /**
   * Records the shape of a client job sent to `model`: `request` as the node receives it. Other
   * kinds than chat and completion, and requests that are not well formed, are ignored. Never
   * throws: it runs on a client's request, which a canary's bookkeeping must not fail.
   */
  note(model: string, kind: string, request: Record<string, unknown>, stream: boolean): void {
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
      ring = { shapes: [], next: 0, counts: new Map(), seen: new Map() };
      if (this.#rings.size >= this.#maxModels) this.#rings.delete(this.#rings.keys().next().value!);
    }
    this.#rings.set(model, ring);
    const entry = { shape, keys: keysOf(shape), taken: false };
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
    for (const key of entry.keys) {
      ring.counts.set(key, (ring.counts.get(key) ?? 0) + 1);
      const seen = ring.seen.get(key) ?? 0;
      ring.seen.delete(key);
      if (ring.seen.size >= this.#keysPerModel) ring.seen.delete(ring.seen.keys().next().value!);
      ring.seen.set(key, seen + 1);
    }
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
