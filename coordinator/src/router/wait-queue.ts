import { DEFAULT_QUEUE_DEPTH, DEFAULT_QUEUE_WAIT_MS } from '../config-schema.js';
import { ApiError } from '../errors.js';

/** The share of a model's queue one client (API key) may hold. */
export const CLIENT_SHARE = 0.25;
/**
 * How often waiters look again without a wake-up: a node that came online or reported a lower
 * load frees capacity no release announces.
 */
export const QUEUE_RECHECK_MS = 100;

type Waiter = { wake(): void };
type ModelQueue = {
  /** Waiters by who sent them (API key, else user), each in arrival order. */
  byClient: Map<string, Waiter[]>;
  /** Clients in the order they are served (round robin). */
  turn: string[];
  size: number;
  timer: NodeJS.Timeout | undefined;
};

/**
 * Per-model waiting room for requests that found every candidate at capacity: they wait (at most
 * `waitMs`, at most `depth` per model) and are woken one at a time as slots free, taking turns by
 * client — so one key's burst cannot starve another key's request: a client with one request
 * waiting is served within one wake of any client with hundreds. A woken request picks again; if
 * someone else took the slot it waits again at the head of its client's line.
 */
export class WaitQueue {
  readonly #depth: number;
  /**
   * Most of one model's queue one client may hold once the queue is half full: alone, a client may
   * use half of it; a burst then leaves the other half for everyone else.
   */
  readonly #perClient: number;
  readonly #waitMs: number;
  readonly #models = new Map<string, ModelQueue>();

  constructor(options: { depth?: number; waitMs?: number } = {}) {
    this.#depth = options.depth ?? DEFAULT_QUEUE_DEPTH;
    this.#perClient = Math.max(1, Math.ceil(this.#depth * CLIENT_SHARE));
    this.#waitMs = options.waitMs ?? DEFAULT_QUEUE_WAIT_MS;
  }

  /** Requests waiting for `model`: a new request joins them rather than jumping the line. */
  waiting(model: string): number {
    return this.#models.get(model)?.size ?? 0;
  }

  /** Requests of one client (API key, else user) waiting for `model`. */
  waitingFor(model: string, client: string): number {
    return this.#models.get(model)?.byClient.get(client)?.length ?? 0;
  }

  /**
   * Waits for a turn at `model` until `deadline` (performance.now() ms; default now + waitMs).
   * Resolves true when woken, false once the deadline passed; throws 503 when the queue is full.
   */
  wait(model: string, client: string, deadline: number, front = false): Promise<boolean> {
    let queue = this.#models.get(model);
    if (!queue) {
      queue = { byClient: new Map(), turn: [], size: 0, timer: undefined };
      this.#models.set(model, queue);
    }
    const own = queue.byClient.get(client)?.length ?? 0;
    const crowded = queue.size >= this.#depth / 2 && own >= this.#perClient;
    if (queue.size >= this.#depth || (!front && crowded)) {
      throw new ApiError(
        'no_provider_available',
        `Every provider of "${model}" is at capacity and ${queue.size} requests are waiting; retry shortly.`,
        { retryAfterS: 1 },
      );
    }
    const q = queue;
    return new Promise<boolean>((resolve) => {
      const remaining = deadline - performance.now();
      const waiter: Waiter = {
        wake: () => {
          clearTimeout(timeout);
          resolve(true);
        },
      };
      const timeout = setTimeout(
        () => {
          this.#remove(model, q, client, waiter);
          resolve(false);
        },
        Math.max(0, remaining),
      );
      let line = q.byClient.get(client);
      if (!line) {
        line = [];
        q.byClient.set(client, line);
        // A request woken and beaten to the slot keeps its client's turn.
        if (front) q.turn.unshift(client);
        else q.turn.push(client);
      }
      if (front) line.unshift(waiter);
      else line.push(waiter);
      q.size++;
      q.timer ??= setInterval(() => this.#recheck(model), QUEUE_RECHECK_MS);
      q.timer.unref?.();
    });
  }

  /** The deadline a request arriving now may wait until. */
  deadline(): number {
    return performance.now() + this.#waitMs;
  }

  /** A slot of `model` freed: the next client in turn's oldest waiter looks again. */
  wake(model: string): void {
    const q = this.#models.get(model);
    if (!q || q.size === 0) return;
    const client = q.turn.shift()!;
    const line = q.byClient.get(client)!;
    const waiter = line.shift()!;
    q.size--;
    if (line.length > 0) q.turn.push(client);
    else q.byClient.delete(client);
    this.#tidy(model, q);
    waiter.wake();
  }

  /**
   * The next waiter in turn looks again: capacity may have appeared without a release (a node came
   * online). One at a time keeps the turns; if it finds a slot, the releases that follow wake the rest.
   */
  #recheck(model: string): void {
    this.wake(model);
  }

  #remove(model: string, q: ModelQueue, client: string, waiter: Waiter): void {
    const line = q.byClient.get(client);
    const at = line?.indexOf(waiter) ?? -1;
    if (!line || at < 0) return;
    line.splice(at, 1);
    q.size--;
    if (line.length === 0) {
      q.byClient.delete(client);
      q.turn = q.turn.filter((c) => c !== client);
    }
    this.#tidy(model, q);
  }

  #tidy(model: string, q: ModelQueue): void {
    if (q.size > 0) return;
    clearInterval(q.timer);
    this.#models.delete(model);
  }

  /** Stops the recheck timers (the app is closing); waiters time out as they would. */
  close(): void {
    for (const q of this.#models.values()) clearInterval(q.timer);
  }
}
