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
  grantScopes,
  type Manifest,
  NORMAL_CLOSE_CODE,
  type NodeRole,
  negotiateVersion,
  nextPresence,
  PRESENCE_EVENT_FOR_STATUS,
  PROTOCOL_ERRORS,
  type PresenceEvent,
  type PresenceState,
  ProtocolError,
  type ProtocolErrorCode,
  parseFrame,
  readJobError,
  SCOPE_FOR_FAMILY,
  type Scope,
  SessionOrder,
  TIER_BENEFITS,
  TIER_NAMES,
  type TierName,
  verifyChallenge,
  verifyManifest,
  verifyOwnerProof,
} from '@gpumesh/protocol';
import { sendCoalesced } from '@gpumesh/protocol/internal';
import WebSocket from 'ws';
import type { Catalog } from '../catalog/catalog.js';
import type { Entry, ModelOffer, PickIndex } from '../router/pick-index.js';
import type { JobError, JobHandle, JobHandlers, JobSpec, JobTokenIds, JobUsage } from './jobs.js';

/**
 * What a session needs from the hub that accepted it (the Hub is one): the pick index to keep in
 * step, the session's settings, and where to register once authenticated.
 */
export type SessionHost = {
  readonly index: PickIndex;
  readonly coordinatorId: string;
  readonly heartbeatIntervalMs: number;
  readonly handshakeTimeoutMs: number;
  readonly ttlMs: number;
  readonly maxFrameBytes: number;
  readonly clock: { now(): number };
  readonly tierOf: (owner: string) => Promise<TierName>;
  /** Lists each offer under its catalog id (catalog/catalog.ts); absent: under the node's own ids. */
  readonly catalog: Catalog | undefined;
  /** A node proved its owner: record the link (its earlier earnings follow, provider/link-node.ts). */
  readonly onOwnerProved: ((nodeId: string, owner: string) => void) | undefined;
  /** The owner a node was linked to from the dashboard, for a node that names none itself. */
  readonly ownerOf: ((nodeId: string) => Promise<string | undefined>) | undefined;
  /** Why the node is suspended, if it is (trust/). */
  readonly suspensionOf: ((nodeId: string) => Promise<string | undefined>) | undefined;
  readonly log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
  register(session: NodeSession): void;
  unregister(session: NodeSession): void;
};

type RunningJob = {
  entry: Entry;
  handlers: JobHandlers;
  timer: NodeJS.Timeout;
  startedAt: number;
  firstSeen: boolean;
  nextSeq: number;
  /** Cancelled by us: waiting (at most CANCEL_ACK_WAIT_MS) for the node's last word on the job. */
  cancelling?: { reason: string };
};

/**
 * How long a cancelled job waits for the node's `job_cancelled` before it is ended anyway: that
 * frame may carry the prompt tokens the node evaluated, which is what a client who left pays
 * (NODE_PROTOCOL.md §9, "Billing a job cut short"). The node's slot stays taken meanwhile, as it is.
 */
export const CANCEL_ACK_WAIT_MS = 1_000;

/** How many ended job ids a session remembers, to tell a late frame from an unknown job. */
export const ENDED_JOBS_KEPT = 1_024;

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
  #jobs = new Map<string, RunningJob>();
  /**
   * Jobs of this session that ended, newest last (at most ENDED_JOBS_KEPT): a node's late frames for
   * them — its `job_cancelled` after our cancel or timeout, a chunk that crossed it — are dropped
   * quietly; `unknown_job` is only for a job id this session never sent (NODE_PROTOCOL.md §9).
   */
  #endedJobs = new Set<string>();
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
    // Encoded first: a job its frame's schema refuses throws here, before anything is sent.
    const frame = encodeFrame(
      createFrame('job', {
        jobId,
        kind: spec.kind,
        // The node's own name for the model (the index may list it under the catalog's).
        model: entry.offer.nodeModelId ?? spec.model,
        request: spec.request,
        stream: spec.stream,
        timeoutMs: spec.timeoutMs,
        ...(spec.continueFrom ? { continueFrom: spec.continueFrom } : {}),
      }),
    );
    this.#order.send('job');
    const timer = setTimeout(() => {
      this.#send(createFrame('cancel', { jobId, reason: 'timeout' }));
      this.#finishJob(jobId, { error: registryError('job_timeout', 'The node did not finish in time.') });
    }, spec.timeoutMs);
    this.#jobs.set(jobId, {
      entry,
      handlers,
      timer,
      startedAt: this.#hub.clock.now(),
      firstSeen: false,
      nextSeq: 0,
    });
    if (this.#socket.readyState === WebSocket.OPEN) sendCoalesced(this.#socket, frame);
    return {
      jobId,
      cancel: (reason: string) => {
        const job = this.#jobs.get(jobId);
        if (!job || job.cancelling) return;
        job.cancelling = { reason };
        this.#send(createFrame('cancel', { jobId, reason: reason.slice(0, 256) }));
        clearTimeout(job.timer);
        job.timer = setTimeout(
          () => this.#finishJob(jobId, { error: registryError('job_cancelled', reason) }),
          CANCEL_ACK_WAIT_MS,
        );
      },
    };
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
        this.#send(createFrame('pong', { ts: frame.ts }));
        return;
      case 'pong': {
        const sentAt = this.#pingSentAt.get(frame.ts);
        if (sentAt !== undefined) {
          this.#pingSentAt.delete(frame.ts);
          this.#hub.index.observeLatency(this.#nodeId, Math.max(0.001, this.#hub.clock.now() - sentAt));
        }
        return;
      }
      case 'chunk':
        return this.#onChunk(frame);
      case 'result':
        this.#finishJob(
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
          this.#finishJob(
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
    if (frame.owner) {
      if (!(await verifyOwnerProof(this.#nodeId, frame.owner))) {
        throw new ProtocolError('auth_failed', 'The owner proof is not valid.');
      }
      this.#owner = frame.owner.address;
      this.#hub.onOwnerProved?.(this.#nodeId, this.#owner);
    } else {
      // Linked from the dashboard with the node key's consent (provider/provider-routes.ts); what
      // it earned after the link and before this connection follows too.
      this.#owner = (await this.#hub.ownerOf?.(this.#nodeId).catch(() => undefined)) ?? null;
      if (this.#owner) this.#hub.onOwnerProved?.(this.#nodeId, this.#owner);
    }
    let tier: TierName = 'none';
    if (this.#owner) {
      try {
        const t = await this.#hub.tierOf(this.#owner);
        if ((TIER_NAMES as readonly string[]).includes(t)) tier = t;
      } catch {
        tier = 'none'; // staking unavailable: route at the lowest tier rather than refuse the node
      }
    }
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
    if (!(await verifyManifest(manifest, frame.signature))) {
      throw new ProtocolError('manifest_signature_invalid');
    }
    if (manifest.nodeId.toLowerCase() !== this.#nodeId.toLowerCase()) {
      throw new ProtocolError('manifest_rejected', 'nodeId differs from the session.');
    }
    if (manifest.protocolVersion !== this.#version) {
      throw new ProtocolError('manifest_rejected', 'protocolVersion differs from the session.');
    }
    if (manifest.owner && manifest.owner.toLowerCase() !== this.#owner?.toLowerCase()) {
      throw new ProtocolError('manifest_rejected', 'owner differs from the proven owner.');
    }
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
  }

  #onChunk(frame: FrameOf<'chunk'>): void {
    const job = this.#jobs.get(frame.jobId);
    if (!job) {
      this.#unknownJob(frame.jobId);
      return;
    }
    if (job.cancelling) return; // nothing more reaches the client after a cancel
    if (frame.seq !== job.nextSeq) {
      this.#finishJob(frame.jobId, {
        error: { code: 'provider_error', message: 'Chunks arrived out of sequence.', retryable: false },
      });
      this.#send(createFrame('cancel', { jobId: frame.jobId, reason: 'chunk out of sequence' }));
      return;
    }
    job.nextSeq++;
    this.#firstSign(job);
    job.handlers.onChunk?.(frame.chunk, frame.seq, frame.tokens);
  }

  /** A chunk or result for a job not running: quiet if it ended here, else `unknown_job`. */
  #unknownJob(jobId: string): void {
    if (this.#endedJobs.has(jobId)) return;
    this.#send(errorFrame('unknown_job', { jobId, message: 'No such job.' }));
  }

  #firstSign(job: RunningJob): void {
    if (job.firstSeen) return;
    job.firstSeen = true;
    this.#hub.index.observeLatency(this.#nodeId, Math.max(0.001, this.#hub.clock.now() - job.startedAt));
  }

  #finishJob(
    jobId: string,
    outcome: { response: FrameOf<'result'>['response']; tokenIds?: JobTokenIds } | { error: JobError },
    fromNode = false,
  ): void {
    const job = this.#jobs.get(jobId);
    if (!job) {
      // A node's error for a job that is not running is never answered (§9); a chunk or result is
      // answered only when the job id was never sent in this session.
      if (fromNode && 'response' in outcome) this.#unknownJob(jobId);
      return;
    }
    this.#jobs.delete(jobId);
    this.#endedJobs.add(jobId);
    if (this.#endedJobs.size > ENDED_JOBS_KEPT)
      this.#endedJobs.delete(this.#endedJobs.values().next().value!);
    clearTimeout(job.timer);
    if (job.cancelling) {
      // The node's answer to our cancel (or a result that crossed it): the job stays cancelled,
      // with the usage the node reported, if any.
      const usage = 'response' in outcome ? outcome.response.usage : outcome.error.usage;
      job.handlers.onError(registryError('job_cancelled', job.cancelling.reason, usage));
      return;
    }
    if ('response' in outcome) {
      this.#firstSign(job);
      job.handlers.onResult(outcome.response as Parameters<JobHandlers['onResult']>[0], outcome.tokenIds);
    } else {
      job.handlers.onError(outcome.error);
    }
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
    for (const jobId of [...this.#jobs.keys()]) {
      this.#finishJob(jobId, {
        error: { code: 'node_lost', message: 'The node disconnected during the job.', retryable: true },
      });
    }
    this.#hub.unregister(this);
    if (this.#nodeId && this.#order.ready) this.#hub.log.info({ nodeId: this.#nodeId, why }, 'node left');
  }
}

/** A job error the hub gives itself with a registry code (a timeout, a cancel), retryable as registered. */
function registryError(code: ProtocolErrorCode, message: string, usage?: JobUsage): JobError {
  const { retryable } = PROTOCOL_ERRORS[code];
  return { code, protocolCode: code, message, retryable, ...(usage ? { usage } : {}) };
}

/**
 * The models the coordinator routes to a node: those whose family's scope was granted, each under
 * the id the catalog lists it by (a canonical id for known weights, `<nodeId>/<name>` for unknown
 * ones); the first offer wins when two map to one id.
 */
function routableModels(
  manifest: Manifest,
  scopes: readonly Scope[],
  tier: TierName,
  catalog: Catalog | undefined,
): ModelOffer[] {
  const tierCap = TIER_BENEFITS[tier].maxConcurrency;
  const byId = new Map<string, ModelOffer>();
  for (const m of manifest.models) {
    if (!scopes.includes(SCOPE_FOR_FAMILY[m.family])) continue;
    const voice = m.family === 'voice' ? voicePricing(m) : undefined;
    if (m.family === 'voice' && !voice) continue; // no priced voice job: nothing to route
    const modelId = catalog ? catalog.listedId(m, manifest.nodeId) : m.id;
    if (byId.has(modelId)) continue;
    byId.set(modelId, {
      modelId,
      ...(modelId !== m.id ? { nodeModelId: m.id } : {}),
      family: m.family,
      contextLength: m.contextLength,
      maxConcurrency: Math.min(m.maxConcurrency, tierCap),
      priceIn: voice?.priceIn ?? BigInt(m.price.inputPerMTok),
      priceOut: voice ? 0n : BigInt(m.price.outputPerMTok),
      currency: m.price.currency,
      ...(m.sha256 ? { sha256: m.sha256.toLowerCase() } : {}),
      ...(voice ? { kinds: voice.kinds, ...voice.prices } : {}),
      ...(m.continues ? { continues: true } : {}),
    });
  }
  return [...byId.values()];
}

/**
 * A voice offer's routed kinds — those it names in `kinds` and prices (inputPerSecond for
 * transcription and translation, inputPerMChar for speech) — and the price it sorts by, per
 * million of its first kind's billing units (milliseconds of audio, characters); undefined when
 * it prices none (NODE_PROTOCOL.md §9 "Units and prices").
 */
function voicePricing(
  m: Manifest['models'][number],
): { kinds: string[]; priceIn: bigint; prices: { perSecond?: bigint; perMChar?: bigint } } | undefined {
  const perSecond = m.price.inputPerSecond === undefined ? undefined : BigInt(m.price.inputPerSecond);
  const perMChar = m.price.inputPerMChar === undefined ? undefined : BigInt(m.price.inputPerMChar);
  const kinds = (m.kinds ?? []).filter((k) => (k === 'speech' ? perMChar : perSecond) !== undefined);
  if (kinds.length === 0) return undefined;
  const priceIn = kinds[0] === 'speech' ? perMChar! : perSecond! * 1000n;
  return {
    kinds,
    priceIn,
    prices: {
      ...(perSecond !== undefined ? { perSecond } : {}),
      ...(perMChar !== undefined ? { perMChar } : {}),
    },
  };
}
