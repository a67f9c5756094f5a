/**
 * The node hub: accepts node WebSockets per protocol/NODE_PROTOCOL.md, runs one session state
 * machine per socket (hub/node-session.ts), keeps the router's pick index in step with presence,
 * load and latency, expires silent nodes at the TTL, and carries jobs to nodes and their chunks back.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import {
  DEFAULT_HANDSHAKE_TIMEOUT_MS,
  DEFAULT_HEARTBEAT_INTERVAL_MS,
  DEFAULT_MAX_FRAME_BYTES,
  type TierName,
  ttlMsFor,
} from '@gpumesh/protocol';
import type { WebSocket } from 'ws';
import type { JobHandle, JobHandlers, JobSpec } from '../router/jobs.js';
import { nativeToUsdNano } from '../router/native-to-usd-nano.js';
import { type Entry, PickIndex } from '../router/pick-index.js';
import type { JobTransport } from '../router/router.js';
import { NodeSession, type SessionHost } from './node-session.js';
import { VerifiedSignatures } from './verified-signatures.js';

export type { JobError, JobHandle, JobHandlers, JobSpec, JobTokenIds, JobUsage } from '../router/jobs.js';

export type HubOptions = {
  /** Names this coordinator in challenges. */
  coordinatorId?: string;
  heartbeatIntervalMs?: number;
  handshakeTimeoutMs?: number;
  maxFrameBytes?: number;
  /** nanousd per whole native token, to compare native-token prices. */
  nativeUsdPriceNano: bigint;
  /** The owner's tier from its stake; `none` when the node names no owner. */
  tierOf?: (owner: string) => Promise<TierName>;
  /** Lists offers under catalog ids (catalog/catalog.ts); absent: under the nodes' own ids. */
  catalog?: NonNullable<SessionHost['catalog']>;
  /** Called when a node proves its owner wallet at connect (the link is recorded there). */
  onOwnerProved?: (nodeId: string, owner: string) => void;
  /** The owner a node was linked to, for a node that proves none at connect. */
  ownerOf?: (nodeId: string) => Promise<string | undefined>;
  /** Why a node may not serve (suspended by verification, trust/), checked at each connection. */
  suspensionOf?: (nodeId: string) => Promise<string | undefined>;
  /** A node became routable here (its first manifest was accepted), or its session ended. */
  onNodeSession?: (event: 'up' | 'down', nodeId: string) => void;
  clock?: { now(): number };
  log?: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
};

/**
 * The local job transport (router/router.ts): jobs for nodes connected here go over their session.
 * Slots are the router's, not the hub's.
 */
export class Hub implements JobTransport {
  readonly index: PickIndex;
  readonly coordinatorId: string;
  readonly heartbeatIntervalMs: number;
  readonly ttlMs: number;
  readonly handshakeTimeoutMs: number;
  readonly maxFrameBytes: number;
  readonly clock: { now(): number };
  readonly tierOf: (owner: string) => Promise<TierName>;
  readonly catalog: SessionHost['catalog'];
  readonly onOwnerProved: ((nodeId: string, owner: string) => void) | undefined;
  readonly ownerOf: ((nodeId: string) => Promise<string | undefined>) | undefined;
  /** Manifest and owner-proof signatures verified before: a reconnect recovers only its challenge's. */
  readonly verified = new VerifiedSignatures();
  readonly log: NonNullable<HubOptions['log']>;
  readonly #onNodeSession: HubOptions['onNodeSession'];
  readonly suspensionOf: HubOptions['suspensionOf'];
  readonly #sessions = new Map<string, NodeSession>();
  readonly #pending = new Set<NodeSession>();
  #sweep: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(options: HubOptions) {
    this.coordinatorId = options.coordinatorId ?? `coordinator-${randomBytes(4).toString('hex')}`;
    this.heartbeatIntervalMs = options.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_INTERVAL_MS;
    this.ttlMs = ttlMsFor(this.heartbeatIntervalMs);
    this.handshakeTimeoutMs = options.handshakeTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS;
    this.maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
    this.clock = options.clock ?? { now: () => Date.now() };
    this.tierOf = options.tierOf ?? (async () => 'none');
    this.catalog = options.catalog;
    this.onOwnerProved = options.onOwnerProved;
    this.ownerOf = options.ownerOf;
    this.#onNodeSession = options.onNodeSession;
    this.suspensionOf = options.suspensionOf;
    this.log = options.log ?? { info: () => {}, warn: () => {} };
    const price = options.nativeUsdPriceNano;
    this.index = new PickIndex({ nativeToUsdNano: (wei) => nativeToUsdNano(wei, price) });
  }

  /** Starts the TTL sweep. Call once the hub is wired to a server. */
  start(): void {
    if (this.#sweep || this.#closed) return;
    const every = Math.max(10, Math.floor(this.heartbeatIntervalMs / 2));
    this.#sweep = setInterval(() => this.#expire(), every);
    this.#sweep.unref();
  }

  /** Takes over a node WebSocket (already upgraded). */
  accept(socket: WebSocket): void {
    if (this.#closed) {
      socket.close(1001, 'shutting down');
      return;
    }
    const session = new NodeSession(this, socket);
    this.#pending.add(session);
    socket.once('close', () => this.#pending.delete(session));
  }

  /** Called by a session once its manifest is accepted; replaces an older session of the node. */
  register(session: NodeSession): void {
    this.#pending.delete(session);
    const old = this.#sessions.get(session.nodeId);
    if (old && old !== session) old.replaced();
    this.#sessions.set(session.nodeId, session);
    if (old !== session) this.#onNodeSession?.('up', session.nodeId);
  }

  /** Called by a session when it ends; drops the node from routing. */
  unregister(session: NodeSession): void {
    this.#pending.delete(session);
    if (this.#sessions.get(session.nodeId) === session) {
      this.#sessions.delete(session.nodeId);
      this.index.remove(session.nodeId);
      this.#onNodeSession?.('down', session.nodeId);
    }
  }

  /** Suspends a node connected here: told why, disconnected (4012), out of routing. */
  suspend(nodeId: string, reason: string): boolean {
    const session = this.#sessions.get(nodeId);
    if (!session) return false;
    session.suspend(reason);
    return true;
  }

  /** The live session of a node. */
  session(nodeId: string): NodeSession | undefined {
    return this.#sessions.get(nodeId);
  }

  /** Whether a job for this entry's node can be sent now: its session here is ready. */
  reachable(entry: Entry): boolean {
    return !entry.node.via && this.#sessions.get(entry.node.nodeId)?.ready === true;
  }

  /** Number of sessions past their handshake. */
  get size(): number {
    return this.#sessions.size;
  }

  /**
   * Sends a job to the node of `entry` over its session. Handlers are called at most once at the
   * end (onResult or onError); a node that dies fails the job with `node_lost`.
   */
  dispatch(entry: Entry, spec: JobSpec, handlers: JobHandlers): JobHandle {
    const session = entry.node.via ? undefined : this.#sessions.get(entry.node.nodeId);
    const jobId = randomUUID();
    if (!session?.ready) {
      queueMicrotask(() =>
        handlers.onError({ code: 'node_lost', message: 'The node is no longer connected.', retryable: true }),
      );
      return { jobId, cancel: () => {} };
    }
    return session.startJob(jobId, entry, spec, handlers);
  }

  /** Asks a node to drain: it finishes in-flight jobs and takes no new ones. */
  drain(nodeId: string, deadlineMs: number): boolean {
    const session = this.#sessions.get(nodeId);
    if (!session) return false;
    session.drain(deadlineMs);
    return true;
  }

  /** Closes every session (bye) and stops the sweep. */
  close(): void {
    this.#closed = true;
    if (this.#sweep) clearInterval(this.#sweep);
    for (const s of [...this.#sessions.values(), ...this.#pending]) s.shutdown('coordinator shutting down');
  }

  #expire(): void {
    const now = this.clock.now();
    for (const s of [...this.#sessions.values(), ...this.#pending]) s.checkExpiry(now);
  }
}
