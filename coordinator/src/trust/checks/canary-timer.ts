import type { Entry } from '../../router/pick-index.js';

export type CanaryTimerOptions = {
  /** The mean gap between one node's canaries, ms (`trust.canaryIntervalMs`); 0 or less: none. */
  meanMs: () => number;
  clock: { now(): number };
  /** Uniform in [0, 1). */
  random: () => number;
  /** The nodes canaries go to now, one entry each (CanaryRunner.targets). */
  targets: () => Entry[];
  /** Sends one canary to `target`. */
  run: (target: Entry) => Promise<unknown>;
  log: { warn(obj: object, msg: string): void };
};

/**
 * When canaries go out (canary-runner.ts): to each target at exponential gaps — a Poisson process,
 * so a node cannot tell when the next one comes — its first a random gap after it is first seen;
 * never two at once to one node.
 */
export class CanaryTimer {
  readonly #options: CanaryTimerOptions;
  readonly #due = new Map<string, number>();
  readonly #running = new Set<string>();
  #timer: NodeJS.Timeout | undefined;

  constructor(options: CanaryTimerOptions) {
    this.#options = options;
  }

  /** Starts the timer (when canaries are on); each node's first canary comes after a random gap. */
  start(): void {
    const mean = this.#options.meanMs();
    if (mean <= 0 || this.#timer) return;
    this.#timer = setInterval(() => this.#tick(), Math.max(50, Math.min(1_000, mean / 4))).unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #tick(): void {
    const { clock, targets, run, log } = this.#options;
    const now = clock.now();
    const mean = this.#options.meanMs();
    for (const target of targets()) {
      const id = target.node.nodeId;
      const due = this.#due.get(id);
      if (due === undefined) {
        this.#due.set(id, now + this.#gap(mean));
        continue;
      }
      if (now < due || this.#running.has(id)) continue;
      this.#due.set(id, now + this.#gap(mean));
      this.#running.add(id);
      run(target)
        .catch((err: unknown) => log.warn({ err, nodeId: id }, 'canary failed'))
        .finally(() => this.#running.delete(id));
    }
  }

  /** Exponential gap with this mean: canaries arrive as a Poisson process, unpredictable. */
  #gap(mean: number): number {
    return Math.round(-Math.log(1 - this.#options.random()) * mean);
  }
}
