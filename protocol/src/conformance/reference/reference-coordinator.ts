import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';
import {
  DEFAULT_CHALLENGE_TTL_MS,
  DEFAULT_HANDSHAKE_TIMEOUT_MS,
  DEFAULT_HEARTBEAT_INTERVAL_MS,
  DEFAULT_MAX_FRAME_BYTES,
  NORMAL_CLOSE_CODE,
  PROTOCOL_VERSION,
  ttlMsFor,
} from '../../constants.js';
import { createFrame } from '../../create-frame.js';
import { encodeFrame } from '../../encode-frame.js';
import { errorFrame } from '../../error-frame.js';
import { ProtocolError } from '../../errors.js';
import { verifyChallenge } from '../../identity/verify-challenge.js';
import { verifyManifest } from '../../identity/verify-manifest.js';
import { verifyOwnerProof } from '../../identity/verify-owner-proof.js';
import type { Manifest } from '../../manifest.js';
import type {
  ChallengeFrame,
  ChunkFrame,
  ErrorFrame,
  Frame,
  HelloFrame,
  JobKind,
  PresenceFrame,
  ResultFrame,
} from '../../messages.js';
import { negotiateVersion } from '../../negotiate-version.js';
import { parseFrame } from '../../parse-frame.js';
import { nextPresence, PRESENCE_EVENT_FOR_STATUS, type PresenceState } from '../../presence.js';
import { SCOPE_FOR_FAMILY, type Scope } from '../../scopes.js';
import { SessionOrder } from '../../session-order.js';
import { grantScopes, TIER_BENEFITS, type TierName, tierForStake } from '../../tiers.js';
import { ignoresBadFrame } from './ignores-bad-frame.js';

export type ReferenceCoordinatorOptions = {
  port?: number;
  host?: string;
  heartbeatIntervalMs?: number;
  maxFrameBytes?: number;
  handshakeTimeoutMs?: number;
  /** The owner's stake in wei (default: 0, tier none). */
  stakeOf?: (owner: string) => Promise<bigint> | bigint;
  /**
   * Break the rule one coordinator conformance scenario checks (named after it). Only for proving
   * that the kit catches each violation; a real coordinator never sets this.
   */
  breaks?: string;
};

/** A job's outcome as the coordinator saw it. */
export type JobOutcome = { chunks: ChunkFrame[]; result?: ResultFrame; error?: ErrorFrame };

export type NodeSession = {
  nodeId: string;
  presence: PresenceState;
  load?: PresenceFrame['load'];
  manifest?: Manifest;
  models: string[];
  tier: TierName;
};

export type ReferenceCoordinator = {
  /** The WebSocket URL nodes connect to. */
  url: string;
  /** Live sessions by node id (lower-case). */
  nodes: ReadonlyMap<string, NodeSession>;
  /** Sends a job to a ready node serving `model`; resolves when the job ends. */
  runJob(job: {
    kind: JobKind;
    model: string;
    request: Record<string, unknown>;
    stream: boolean;
    timeoutMs?: number;
  }): Promise<JobOutcome>;
  close(): Promise<void>;
};

type Session = NodeSession & {
  ws: WebSocket;
  order: SessionOrder;
  hello?: HelloFrame;
  challenge?: ChallengeFrame;
  owner?: string;
  lastHeardAt: number;
  timers: NodeJS.Timeout[];
  jobs: Map<string, { outcome: JobOutcome; done: (outcome: JobOutcome) => void }>;
  /** Jobs of this session that ended: late frames for them are dropped quietly (§9). */
  ended: Set<string>;
};

/**
 * A minimal, correct gpumesh coordinator hub: challenge-response authentication, manifest
 * verification, tier-based scopes, presence tracking, heartbeat expiry, strict frame checks, and a
 * `runJob` that routes one job to a node. Third parties can read it as an executable companion to
 * NODE_PROTOCOL.md; the real coordinator adds the router, ledger and HTTP API around the same rules.
 */
export async function startReferenceCoordinator(
  options: ReferenceCoordinatorOptions = {},
): Promise<ReferenceCoordinator> {
  const heartbeatIntervalMs = options.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_INTERVAL_MS;
  const ttlMs = ttlMsFor(heartbeatIntervalMs);
  const maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
  const handshakeTimeoutMs = options.handshakeTimeoutMs ?? DEFAULT_HANDSHAKE_TIMEOUT_MS;
  const breaks = options.breaks;
  const coordinatorId = `reference-${randomUUID()}`;
  const nodes = new Map<string, Session>();

  // The socket accepts a bit more than maxFrameBytes so parseFrame, not ws, reports an oversized frame.
  const wss = new WebSocketServer({
    port: options.port ?? 0,
    host: options.host ?? '127.0.0.1',
    maxPayload: maxFrameBytes * 2,
  });
  await once(wss, 'listening');

  /** Sends a frame, moving the session's phase (challenge, welcome, manifest_ack). */
  const send = (session: Session, frame: Frame) => {
    session.order.send(frame.type);
    if (session.ws.readyState === session.ws.OPEN) session.ws.send(encodeFrame(frame));
  };

  const fail = (session: Session, error: ProtocolError) => {
    send(session, errorFrame(error));
    if (error.closeCode !== null) session.ws.close(error.closeCode, error.code);
  };

  const handle = async (session: Session, frame: Frame): Promise<void> => {
    switch (frame.type) {
      case 'hello': {
        const version = negotiateVersion(frame.versions);
        if (version === undefined && breaks !== 'version')
          return fail(session, new ProtocolError('unsupported_version'));
        session.hello = frame;
        session.nodeId = frame.nodeId.toLowerCase();
        const now = Date.now();
        session.challenge = createFrame('challenge', {
          nonce: randomBytes(16).toString('hex'),
          issuedAt: new Date(now).toISOString(),
          expiresAt: new Date(now + DEFAULT_CHALLENGE_TTL_MS).toISOString(),
          coordinatorId,
        });
        return send(session, session.challenge);
      }
      case 'auth': {
        const { challenge, nodeId } = session;
        const signed = await verifyChallenge({ challenge: challenge!, nodeId, signature: frame.signature });
        if (!signed && breaks !== 'wrong_signature') return fail(session, new ProtocolError('auth_failed'));
        if (frame.owner) {
          if (!(await verifyOwnerProof(nodeId, frame.owner)))
            return fail(session, new ProtocolError('auth_failed'));
          session.owner = frame.owner.address.toLowerCase();
        }
        session.tier = tierForStake(session.owner ? await (options.stakeOf?.(session.owner) ?? 0n) : 0n);
        const previous = nodes.get(nodeId);
        if (previous && breaks !== 'session_replaced') fail(previous, new ProtocolError('session_replaced'));
        nodes.set(nodeId, session);
        return send(
          session,
          createFrame('welcome', {
            version: 0,
            sessionId: randomUUID(),
            heartbeatIntervalMs,
            ttlMs: breaks === 'handshake' ? heartbeatIntervalMs : ttlMs,
            maxFrameBytes,
            tier: session.tier,
            scopes: [...TIER_BENEFITS[session.tier].scopes],
            ...(breaks === 'tier_limit'
              ? {}
              : { maxConcurrentJobs: TIER_BENEFITS[session.tier].maxConcurrency }),
          }),
        );
      }
      case 'manifest': {
        const { manifest, signature } = frame;
        // Node ids match in any case (§3); broken on purpose, only as written in hello.
        const sameId =
          breaks === 'lowercase_node_id'
            ? manifest.nodeId === session.hello?.nodeId
            : manifest.nodeId.toLowerCase() === session.nodeId;
        const sameSession =
          sameId && manifest.role === session.hello?.role && manifest.protocolVersion === PROTOCOL_VERSION;
        if (!sameSession) {
          return fail(
            session,
            new ProtocolError('manifest_rejected', 'Node id, role or version differ from the session.'),
          );
        }
        if (breaks !== 'bad_manifest_signature' && !(await verifyManifest(manifest, signature))) {
          return fail(session, new ProtocolError('manifest_signature_invalid'));
        }
        // Broken on purpose: a re-sent manifest is not acknowledged.
        if (breaks === 'manifest_resend' && session.manifest) return;
        const scopes: Scope[] = grantScopes(session.tier, manifest.scopes);
        session.manifest = manifest;
        session.models = manifest.models
          .filter((m) => scopes.includes(SCOPE_FOR_FAMILY[m.family]))
          .map((m) => m.id);
        // Broken on purpose: the session is ready, but the node hears no acknowledgement.
        if (breaks === 'manifest') return void session.order.send('manifest_ack');
        return send(session, createFrame('manifest_ack', { scopes, models: session.models }));
      }
      case 'presence': {
        try {
          session.presence = nextPresence(session.presence, PRESENCE_EVENT_FOR_STATUS[frame.status]);
          session.load = frame.load;
        } catch (error) {
          if (breaks === 'presence_invalid') return;
          if (error instanceof ProtocolError) return fail(session, error);
          throw error;
        }
        return;
      }
      case 'ping':
        return send(session, createFrame('pong', { ts: frame.ts }));
      case 'chunk':
      case 'result':
      case 'error': {
        if (frame.type === 'error' && frame.jobId === undefined) {
          // The node reports a problem; the session continues (§4). Broken on purpose: it ends.
          if (breaks === 'session_error') session.ws.close(NORMAL_CLOSE_CODE, 'error');
          return;
        }
        const job = session.jobs.get(frame.jobId!);
        if (!job) {
          // unknown_job only for a chunk or result of a job never sent; never for an error (§9).
          const late = session.ended.has(frame.jobId!) && breaks !== 'late_job_frames';
          const answer =
            frame.type === 'error' ? breaks === 'late_job_frames' : !late && breaks !== 'unknown_job';
          if (answer)
            send(session, errorFrame('unknown_job', { jobId: frame.jobId!, message: 'No such job.' }));
          return;
        }
        if (frame.type === 'chunk') job.outcome.chunks.push(frame);
        else {
          if (frame.type === 'result') {
            job.outcome.result = frame;
            // Broken on purpose: an empty answer is taken for a failure.
            if (breaks === 'empty_output' && JSON.stringify(frame.response).includes('"content":""'))
              job.outcome.error = errorFrame('runtime_error', { jobId: frame.jobId, message: 'empty' });
          } else job.outcome.error = frame;
          session.jobs.delete(frame.jobId!);
          session.ended.add(frame.jobId!);
          job.done(job.outcome);
        }
        return;
      }
      case 'bye':
        if (breaks === 'bye') return;
        session.ws.close(NORMAL_CLOSE_CODE, 'bye');
        return;
      default:
        return; // pong: nothing to do (any frame already refreshed lastHeardAt)
    }
  };

  wss.on('connection', (ws) => {
    const session: Session = {
      ws,
      nodeId: '',
      order: new SessionOrder('coordinator'),
      presence: 'connecting',
      models: [],
      tier: 'none',
      lastHeardAt: Date.now(),
      timers: [],
      jobs: new Map(),
      ended: new Set(),
    };
    session.timers.push(
      setTimeout(() => {
        if (!session.order.ready) fail(session, new ProtocolError('handshake_timeout'));
      }, handshakeTimeoutMs),
      setInterval(
        () => {
          // The TTL runs from welcome on (the node learns the interval there); before, the handshake timeout.
          const timed = session.order.phase === 'manifest' || session.order.ready;
          if (timed && breaks !== 'heartbeat_expiry' && Date.now() - session.lastHeardAt > ttlMs) {
            fail(session, new ProtocolError('heartbeat_timeout'));
          }
        },
        Math.max(10, Math.floor(heartbeatIntervalMs / 4)),
      ),
    );
    // Frames are handled one at a time, in order, even when a handler awaits a signature check.
    let queue = Promise.resolve();
    ws.on('message', (data, binary) => {
      session.lastHeardAt = Date.now();
      let frame: Frame;
      try {
        const limit = breaks === 'oversized' ? Number.POSITIVE_INFINITY : maxFrameBytes;
        frame = parseFrame(data as Buffer, { maxBytes: limit, binary });
      } catch (error) {
        if (ignoresBadFrame(breaks, error, data as Buffer, binary)) return;
        return fail(session, error instanceof ProtocolError ? error : new ProtocolError('internal_error'));
      }
      try {
        session.order.receive(frame.type);
      } catch (error) {
        // Broken on purpose: the frame is handled as if it were in order.
        const wrongSide = frame.type === 'drain';
        if (!(breaks === 'out_of_order' && !wrongSide) && !(breaks === 'wrong_direction' && wrongSide))
          return fail(session, error as ProtocolError);
      }
      queue = queue
        .then(() => handle(session, frame))
        .catch(() => fail(session, new ProtocolError('internal_error')));
    });
    ws.on('error', () => {
      // 'close' follows.
    });
    ws.on('close', () => {
      for (const timer of session.timers) clearTimeout(timer);
      if (nodes.get(session.nodeId) === session) nodes.delete(session.nodeId);
      for (const [jobId, job] of session.jobs) {
        job.outcome.error = errorFrame('runtime_error', { jobId, message: 'node disconnected' });
        job.done(job.outcome);
      }
      session.jobs.clear();
    });
  });

  const { address, port } = wss.address() as AddressInfo;
  return {
    url: `ws://${address}:${port}`,
    nodes,
    runJob({ kind, model, request, stream, timeoutMs = 30_000 }) {
      const session = [...nodes.values()].find(
        (s) => s.order.ready && s.presence === 'online' && s.models.includes(model),
      );
      if (!session) return Promise.reject(new Error(`no node serves ${model}`));
      const jobId = randomUUID();
      return new Promise<JobOutcome>((resolve) => {
        const timer = setTimeout(() => {
          session.jobs.delete(jobId);
          session.ended.add(jobId);
          send(session, createFrame('cancel', { jobId, reason: 'timeout' }));
          resolve({
            chunks: [],
            error: errorFrame('job_timeout', { jobId, message: 'timed out' }),
          });
        }, timeoutMs);
        session.jobs.set(jobId, {
          outcome: { chunks: [] },
          done: (outcome) => {
            clearTimeout(timer);
            resolve(outcome);
          },
        });
        if (breaks === 'jobs') return;
        send(session, createFrame('job', { jobId, kind, model, request, stream, timeoutMs }));
      });
    },
    async close() {
      for (const session of nodes.values()) {
        send(session, createFrame('bye', { reason: 'shutdown' }));
        session.ws.close(NORMAL_CLOSE_CODE, 'shutdown');
      }
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}
