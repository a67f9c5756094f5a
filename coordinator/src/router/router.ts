import { DEFAULT_PREFIX_AFFINITY_MARGIN_BPS } from '../config-schema.js';
import type { JobError, JobHandle, JobHandlers, JobSpec } from './jobs.js';
import type { Entry, PickIndex } from './pick-index.js';
import { DEFAULT_AFFINITY_MAX_SHARE } from './prefer-prefix.js';
import { RecentPicks } from './recent-picks.js';
import { SentPrefixes } from './sent-prefixes.js';
import { WaitQueue } from './wait-queue.js';

/**
 * A way to carry a job to a node: the node's own WebSocket on this replica (the hub), or the
 * replica that holds it (peer-RPC). Handlers are called at most once at the end: onResult or
 * onError; a node that dies fails the job with `node_lost`.
 */
export type JobTransport = {
  /** Whether a job for this entry's node can be sent now. */
  reachable(entry: Entry): boolean;
  /** Sends the job. May throw before anything is sent (a request the job frame refuses). */
  dispatch(entry: Entry, spec: JobSpec, handlers: JobHandlers): JobHandle;
};

/** One slot of a node's entry, held by a request from claim until its job ends. */
export type Slot = {
  readonly entry: Entry;
  /** Gives the slot back and wakes the model's next waiter; idempotent. */
  release(): void;
};

/**
 * Job errors that count against a node's health (pick-index.ts): it timed out, died mid-job or its
 * runtime failed. A refusal (invalid request, overloaded, draining) or a cancel does not.
 */
const MISSES: ReadonlySet<string> = new Set([
  'job_timeout',
  'node_lost',
  'runtime_error',
  'internal_error',
  'provider_error',
  'model_not_found',
]);

const notConnected: JobError = {
  code: 'node_lost',
  message: 'The node is no longer connected.',
  retryable: true,
};

/**
 * Where a picked entry's job goes, and the one place a node's slots are counted: a request claims
 * one slot of its entry before it is sent and the slot comes back when the job ends, whichever transport carries it
 * (the pick index then ranks the node by its share of used slots). Local nodes go through `local`;
 * nodes indexed `via` another replica through the peer transport, when one is set.
 */
export class Router {
  readonly index: PickIndex;
  /** Requests waiting for a slot, woken here as slots free (wait-queue.ts). */
  readonly queue: WaitQueue;
  /** The chat prompts sent each node: cached-token bounds and prefix affinity (sent-prefixes.ts). */
  readonly sentPrefixes: SentPrefixes;
  /** Which node took each model's recent requests: affinity's bound (recent-picks.ts). */
  readonly recentPicks = new RecentPicks();
  /** Prefix affinity's margin and share bound (prefer-prefix.ts); undefined when it is off. */
  readonly affinity: { readonly marginBps: number; readonly maxShare: number } | undefined;
  readonly #local: JobTransport;
  #peer: JobTransport | undefined;

  readonly #onMiss: ((nodeId: string) => void) | undefined;

  constructor(options: {
    index: PickIndex;
    local: JobTransport;
    queue?: { depth?: number; waitMs?: number };
    /** Told each miss (after the pick index demotes the node): the reputation's record of it. */
    onMiss?: (nodeId: string) => void;
    /** How long a sent prefix is taken to stay cached, and prefix affinity (false: off). */
    prefixCache?: { lifetimeMs?: number; affinity?: false | { marginBps?: number; maxShare?: number } };
  }) {
    this.index = options.index;
    const cache = options.prefixCache;
    this.sentPrefixes = new SentPrefixes(
      cache?.lifetimeMs !== undefined ? { lifetimeMs: cache.lifetimeMs } : {},
    );
    // A node's record lasts as long as its session: one that connects again starts from nothing.
    this.index.onRemove((nodeId) => this.sentPrefixes.forget(nodeId));
    this.affinity =
      cache?.affinity === false
        ? undefined
        : {
            marginBps: cache?.affinity?.marginBps ?? DEFAULT_PREFIX_AFFINITY_MARGIN_BPS,
            maxShare: cache?.affinity?.maxShare ?? DEFAULT_AFFINITY_MAX_SHARE,
          };
    this.#local = options.local;
    this.queue = new WaitQueue(options.queue);
    this.#onMiss = options.onMiss;
  }

  /** Lets jobs for nodes other replicas hold go through `peer` (undefined: they can't be sent). */
  setPeer(peer: JobTransport | undefined): void {
    this.#peer = peer;
  }

  /** The node gave no first token in time (attempt.ts cancelled its job): a miss. */
  noteMiss(entry: Entry): void {
    this.#miss(entry.node.nodeId);
  }

  #miss(nodeId: string): void {
    this.index.noteMiss(nodeId);
    this.#onMiss?.(nodeId);
  }

  reachable(entry: Entry): boolean {
    return this.#transport(entry)?.reachable(entry) === true;
  }

  /**
   * Takes one slot of the entry's node if it has one free now and can be reached: undefined when
   * it is full, gone or re-indexed since the pick. Check and take happen together, so requests that
   * picked the same node at once and then awaited (the ledger's hold) can't send it more jobs than
   * its slots. The slot is the caller's until it hands it to dispatch or releases it.
   */
  claim(entry: Entry): Slot | undefined {
    if (!this.index.hasRoom(entry) || !this.reachable(entry)) return undefined;
    this.index.acquire(entry);
    let held = true;
    return {
      entry,
      release: () => {
        if (!held) return;
        held = false;
        this.index.release(entry);
        this.queue.wake(entry.offer.modelId);
      },
    };
  }

  /** Sends a job on a claimed slot; the slot is given back when the job ends (or the send throws). */
  dispatch(slot: Slot, spec: JobSpec, handlers: JobHandlers): JobHandle {
    const { entry } = slot;
    const transport = this.#transport(entry);
    if (!transport) {
      slot.release();
      queueMicrotask(() => handlers.onError(notConnected));
      return { jobId: '', cancel: () => {} };
    }
    try {
      return transport.dispatch(entry, spec, {
        ...(handlers.onChunk ? { onChunk: handlers.onChunk } : {}),
        onResult: (response, tokenIds) => {
          slot.release();
          this.index.noteSuccess(entry.node.nodeId);
          handlers.onResult(response, tokenIds);
        },
        onError: (error) => {
          slot.release();
          if (MISSES.has(error.code)) this.#miss(entry.node.nodeId);
          handlers.onError(error);
        },
      });
    } catch (error) {
      slot.release();
      throw error;
    }
  }

  #transport(entry: Entry): JobTransport | undefined {
    return entry.node.via ? this.#peer : this.#local;
  }
}
