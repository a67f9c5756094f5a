/**
 * Which client jobs trust learns from (traffic-shapes.ts, replay-pool.ts): every one while a
 * model's traffic is light, at most `perSecond` a second of one model when it is heavy. Learning a
 * job's shape costs ~35 µs on the paid path (bench/gateway-load.ts, issue 42), as much as the rest
 * of the coordinator's trust work for it; a sample of a busy model's jobs has its shapes, phrases
 * and repeats in the same proportions, and the rings then span seconds of its traffic instead of a
 * fraction of one. What convicts a node (spot checks, canaries' verdicts) is not sampled here.
 */

/** Jobs of one model learnt per second, at most. */
export const DEFAULT_LEARNT_PER_SECOND = 50;
/** Models counted at once; the one noted least recently goes first. */
const MAX_MODELS = 1024;
const SECOND_MS = 1_000;

export class TrafficSample {
  readonly #perSecond: number;
  /** Per model: the second counted (its start, ms) and the jobs taken in it. */
  readonly #models = new Map<string, { second: number; taken: number }>();

  constructor(perSecond = DEFAULT_LEARNT_PER_SECOND) {
    this.#perSecond = perSecond;
  }

  /** True when a job of `model` arriving at `now` (ms) is to be learnt from. */
  take(model: string, now: number): boolean {
    let counted = this.#models.get(model);
    if (!counted) {
      if (this.#models.size >= MAX_MODELS) this.#models.delete(this.#models.keys().next().value!);
      counted = { second: now, taken: 0 };
      this.#models.set(model, counted);
    } else if (now - counted.second >= SECOND_MS) {
      counted.second = now;
      counted.taken = 0;
      // Least recently noted first: a model noted again moves to the end.
      this.#models.delete(model);
      this.#models.set(model, counted);
    }
    if (counted.taken >= this.#perSecond) return false;
    counted.taken++;
    return true;
  }
}
