/**
 * One node's WebSocket session, as the coordinator runs it: an explicit state machine
 * hello → auth (challenge sent) → manifest (welcome sent) → ready (manifest acknowledged), with
 * presence tracked by the protocol's presence machine. Every inbound frame goes through parseFrame
 * and the protocol's session engine (SessionOrder: the phase moves as the coordinator sends
 * challenge, welcome and manifest_ack); a violation ends the session with its documented close
 * code. A node's job errors are read with the registry's code (readJobError).
 */
import { randomBytes } from 'node:crypto';
import {
  createFrame,
  DEFAULT_CHALLENGE_TTL_MS,
  encodeFrame,
  errorFrame,
  type Frame,
  type FrameOf,
  type Manifest,
  NORMAL_CLOSE_CODE,
  type NodeRole,
  negotiateVersion,
  ProtocolError,
  parseFrame,
  readJobError,
  SessionOrder,
  type TierName,
  verifyChallenge,
} from '@gpumesh/protocol';
import {
  grantScopes,
  nextPresence,
  PRESENCE_EVENT_FOR_STATUS,
  type PresenceEvent,
  type PresenceState,
  sendCoalesced,
  TIER_BENEFITS,
} from '@gpumesh/protocol/internal';
import WebSocket from 'ws';
import type { JobHandle, JobHandlers, JobSpec } from '../router/jobs.js';
import type { Entry, PickIndex } from '../router/pick-index.js';
import { checkManifest } from './check-manifest.js';
import { type OwnerLookup, ownerAndTier } from './owner-and-tier.js';
import { type ListedIds, routableModels } from './routable-models.js';
import { SessionJobs } from './session-jobs.js';

/**
 * What a session needs from the hub that accepted it (the Hub is one): the pick index to keep in
 * step, the session's settings, and where to register once authenticated.
 */
export type SessionHost = OwnerLookup & {
  readonly index: PickIndex;
  readonly coordinatorId: string;
  readonly heartbeatIntervalMs: number;
  readonly handshakeTimeoutMs: number;
  readonly ttlMs: number;
  readonly maxFrameBytes: number;
  readonly clock: { now(): number };
  /** Lists each offer under its catalog id (catalog/catalog.ts); absent: under the node's own ids. */
  readonly catalog: ListedIds | undefined;
  /** Why the node is suspended, if it is (trust/). */
  readonly suspensionOf: ((nodeId: string) => Promise<string | undefined>) | undefined;
  readonly log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
  register(session: NodeSession): void;
  unregister(session: NodeSession): void;
};

export class NodeSession {
  readonly #hub: SessionHost;
  readonly #socket: WebSocket;
  readonly #order = new SessionOrder('coordinator');
  #presence: PresenceState = 'connecting';
  #nodeId = '';
  #owner: string | null = null;
  #tier: TierName = 'none';
  #role: NodeRole | undefined;
  #signedManifest: { manifest: Manifest; signature: string } | undefined;
  #version = 0;
  #challenge: Omit<FrameOf<'challenge'>, 'v' | 'type'> | undefined;
  #lastHeardAt: number;
  #handshakeDeadline: number;
  readonly #jobs: SessionJobs;
  #ended = false;
  #busy: Promise<void> = Promise.resolve();
  #pingTimer: NodeJS.Timeout | undefined;
  #pingSentAt = new Map<number, number>();

  constructor(hub: SessionHost, socket: WebSocket) {
    this.#hub = hub;
    this.#socket = socket;
    const now = hub.clock.now();
    this.#lastHeardAt = now;
    this.#handshakeDeadline = now + hub.handshakeTimeoutMs;
    this.#jobs = new SessionJobs({
      send: (frame) => this.#send(frame),
      sendJob: (frame) => {
        this.#order.send('job');
        if (this.#socket.readyState === WebSocket.OPEN) sendCoalesced(this.#socket, frame);
      },
      now: () => hub.clock.now(),
      observeLatency: (ms) => hub.index.observeLatency(this.#nodeId, ms),
    });
    socket.on('message', (data, binary) => {
      // Frames of one session are handled in order, one at a time (signature checks are async).
      this.#busy = this.#busy.then(() => this.#onMessage(data as Buffer, binary));
    });
    socket.on('close', () => this.#end('closed'));
    socket.on('error', () => {
      // 'close' follows.
    });
  }

  get nodeId(): string {
    return this.#nodeId;
  }

  get ready(): boolean {
    return this.#order.ready && !this.#ended;
  }

  get presence(): PresenceState {
    return this.#presence;
  }

  get tier(): TierName {
    return this.#tier;
  }

  /** The role the node's manifest declares (undefined before its manifest). */
  get role(): NodeRole | undefined {
    return this.#role;
  }

  /** The node's last accepted manifest with its signature (for peer-RPC GetManifest). */
  get signedManifest(): { manifest: Manifest; signature: string } | undefined {
    return this.#signedManifest;
  }

  /** Closes the session when it has been silent past the TTL or is stuck in its handshake. */
  checkExpiry(now: number): void {
    if (this.#ended) return;
    if (!this.#order.ready && now > this.#handshakeDeadline) {
      this.#fail(new ProtocolError('handshake_timeout'));
    } else if (now - this.#lastHeardAt > this.#hub.ttlMs) {
      this.#fail(new ProtocolError('heartbeat_timeout'));
    }
  }

  /** A newer session of the same node took over. */
  /** Verification failed: the node is told why and disconnected; it stays out until reinstated. */
  suspend(reason: string): void {
    this.#move('suspend');
    this.#hub.index.setState(this.#nodeId, 'suspended');
    this.#fail(new ProtocolError('node_suspended', reason));
  }

  replaced(): void {
    this.#fail(new ProtocolError('session_replaced'));
  }

  /** Graceful close from our side. */
  shutdown(reason: string): void {
    if (this.#ended) return;
    this.#send(createFrame('bye', { reason }));
    this.#socket.close(NORMAL_CLOSE_CODE, 'bye');
    this.#end('shutdown');
  }

  drain(deadlineMs: number): void {
    this.#send(createFrame('drain', { deadlineMs }));
    this.#move('drain');
  }

  startJob(jobId: string, entry: Entry, spec: JobSpec, handlers: JobHandlers): JobHandle {
    return this.#jobs.start(jobId, entry, spec, handlers);
  }

  async #onMessage(data: Buffer, binary: boolean): Promise<void> {
    if (this.#ended) return;
    this.#lastHeardAt = this.#hub.clock.now();
    let frame: Frame;
    try {
      frame = parseFrame(data, { maxBytes: this.#hub.maxFrameBytes, binary });
      this.#order.receive(frame.type);
      await this.#handle(frame);
    } catch (error) {
      this.#fail(error instanceof ProtocolError ? error : new ProtocolError('internal_error'));
    }
  }

  async #handle(frame: Frame): Promise<void> {
    switch (frame.type) {
      case 'hello':
        return this.#onHello(frame);
      case 'auth':
        return this.#onAuth(frame);
      case 'manifest':
        return this.#onManifest(frame);
      case 'presence':
        return this.#onPresence(frame);
      case 'ping':
        this.#hub.index.setPrefixCache(this.#nodeId, frame.prefixCache);
        return this.#send(createFrame('pong', { ts: frame.ts }));
      case 'pong': {
        const sentAt = this.#pingSentAt.get(frame.ts);
        if (sentAt !== undefined) {
          this.#pingSentAt.delete(frame.ts);
          this.#hub.index.observeLatency(this.#nodeId, Math.max(0.001, this.#hub.clock.now() - sentAt));
        }
        return;
      }
      case 'chunk':
        return this.#jobs.onChunk(frame);
      case 'result':
        this.#jobs.finish(
          frame.jobId,
          { response: frame.response, ...(frame.tokenIds ? { tokenIds: frame.tokenIds } : {}) },
          true,
        );
        return;
      case 'error': {
        const error = readJobError(frame);
        if (error) {
          // code and retryable as the node sent them; protocolCode as the registry reads the code.
          const { jobId, code: protocolCode, message, usage } = error;
          const { code, retryable } = frame;
          this.#jobs.finish(
            jobId,
            { error: { code, protocolCode, message, retryable, ...(usage ? { usage } : {}) } },
            true,
          );
        }
        return;
      }
      case 'bye':
        this.#socket.close(NORMAL_CLOSE_CODE, 'bye');
        this.#end('bye');
        return;
    }
  }

  #onHello(frame: FrameOf<'hello'>): void {
    const version = negotiateVersion(frame.versions);
    if (version === undefined) throw new ProtocolError('unsupported_version');
    this.#version = version;
    this.#nodeId = frame.nodeId;
    const now = this.#hub.clock.now();
    this.#challenge = {
      nonce: randomBytes(16).toString('hex'),
      issuedAt: new Date(now).toISOString(),
      expiresAt: new Date(now + DEFAULT_CHALLENGE_TTL_MS).toISOString(),
      coordinatorId: this.#hub.coordinatorId,
    };
    this.#send(createFrame('challenge', this.#challenge));
  }

  async #onAuth(frame: FrameOf<'auth'>): Promise<void> {
    const challenge = this.#challenge!;
    const ok = await verifyChallenge({
      challenge,
      nodeId: this.#nodeId,
      signature: frame.signature,
      now: this.#hub.clock.now(),
    });
    if (!ok) throw new ProtocolError('auth_failed', 'The challenge signature is not the node key’s.');
    const suspended = await this.#hub.suspensionOf?.(this.#nodeId).catch(() => undefined);
    if (suspended) throw new ProtocolError('node_suspended', suspended);
    const { owner, tier } = await ownerAndTier(this.#hub, this.#nodeId, frame.owner);
    this.#owner = owner;
    this.#tier = tier;
    this.#send(
      createFrame('welcome', {
        version: this.#version,
        sessionId: randomBytes(12).toString('hex'),
        heartbeatIntervalMs: this.#hub.heartbeatIntervalMs,
        ttlMs: this.#hub.ttlMs,
        maxFrameBytes: this.#hub.maxFrameBytes,
        tier,
        scopes: [...TIER_BENEFITS[tier].scopes],
        maxConcurrentJobs: TIER_BENEFITS[tier].maxConcurrency,
      }),
    );
    this.#pingTimer = setInterval(() => this.#ping(), this.#hub.heartbeatIntervalMs);
    this.#pingTimer.unref();
  }

  /**
   * The node was linked to `owner` from the dashboard while connected: from now on its jobs credit
   * the owner. Its tier (and so its scopes) stays what `welcome` said until it reconnects.
   */
  adoptOwner(owner: string): void {
    if (this.#owner || !this.#signedManifest) return;
    this.#owner = owner;
    const current = this.#hub.index.node(this.#nodeId);
    if (!current) return;
    this.#hub.index.upsert({
      nodeId: this.#nodeId,
      owner,
      tierRank: current.tierRank,
      scopes: current.scopes,
      state: current.state,
      models: [...current.entries.values()].map((entry) => entry.offer),
    });
  }

  async #onManifest(frame: FrameOf<'manifest'>): Promise<void> {
    const manifest = frame.manifest;
    await checkManifest(
      frame,
      { nodeId: this.#nodeId, version: this.#version, owner: this.#owner },
      this.#hub.verified,
    );
    const scopes = grantScopes(this.#tier, manifest.scopes);
    const models = routableModels(manifest, scopes, this.#tier, this.#hub.catalog);
    const firstManifest = !this.#order.ready;
    this.#role = manifest.role;
    this.#signedManifest = { manifest, signature: frame.signature };
    this.#hub.register(this);
    this.#hub.index.upsert({
      nodeId: this.#nodeId,
      owner: this.#owner,
      tierRank: TIER_BENEFITS[this.#tier].routingPriority,
      scopes: new Set<string>(scopes),
      state: this.#presence,
      models,
    });
    // Sending the ack makes the session ready.
    this.#send(
      createFrame('manifest_ack', { scopes, models: models.map((m) => m.nodeModelId ?? m.modelId) }),
    );
    if (firstManifest)
      this.#hub.log.info({ nodeId: this.#nodeId, tier: this.#tier, models: models.length }, 'node ready');
  }

  #onPresence(frame: FrameOf<'presence'>): void {
    const event: PresenceEvent = PRESENCE_EVENT_FOR_STATUS[frame.status];
    if (event === 'disconnect') {
      this.#move('disconnect');
      return;
    }
    this.#move(event);
    const { inFlight, capacity } = frame.load;
    this.#hub.index.setLoad(this.#nodeId, capacity > 0 ? Math.min(1, inFlight / capacity) : 1);
    this.#hub.index.setPrefixCache(this.#nodeId, frame.prefixCache);
  }

  #move(event: PresenceEvent): void {
    let next: PresenceState;
    try {
      next = nextPresence(this.#presence, event);
    } catch (error) {
      // An illegal move (e.g. online after draining) is reported; the session continues.
      this.#send(errorFrame(error as ProtocolError));
      return;
    }
    this.#presence = next;
    if (next === 'offline') {
      this.#end('offline');
      return;
    }
    if (this.#order.ready) this.#hub.index.setState(this.#nodeId, next);
  }

  #ping(): void {
    if (this.#ended) return;
    const ts = this.#hub.clock.now();
    this.#pingSentAt.set(ts, ts);
    if (this.#pingSentAt.size > 8) this.#pingSentAt.delete(this.#pingSentAt.keys().next().value!);
    this.#send(createFrame('ping', { ts }));
  }

  #fail(error: ProtocolError): void {
    if (this.#ended) return;
    this.#send(errorFrame(error));
    if (error.closeCode !== null) {
      this.#socket.close(error.closeCode, error.code);
      this.#end(error.code);
    }
  }

  /** Sends a frame the session's order allows (it moves the phase: challenge, welcome, manifest_ack). */
  #send(frame: Frame): void {
    this.#order.send(frame.type);
    if (this.#socket.readyState === WebSocket.OPEN) sendCoalesced(this.#socket, encodeFrame(frame));
  }

  #end(why: string): void {
    if (this.#ended) return;
    this.#ended = true;
    clearInterval(this.#pingTimer);
    this.#presence = 'offline';
    if (this.#socket.readyState === WebSocket.OPEN || this.#socket.readyState === WebSocket.CONNECTING) {
      // Closing from our side after a terminal event; the peer may already be gone.
      this.#socket.close(NORMAL_CLOSE_CODE, why.slice(0, 100));
    }
    this.#jobs.endAll({
      code: 'node_lost',
      message: 'The node disconnected during the job.',
      retryable: true,
    });
    this.#hub.unregister(this);
    if (this.#nodeId && this.#order.ready) this.#hub.log.info({ nodeId: this.#nodeId, why }, 'node left');
  }
}
