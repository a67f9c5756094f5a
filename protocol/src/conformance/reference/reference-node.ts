import type { Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import WebSocket from 'ws';
import {
  DEFAULT_MAX_FRAME_BYTES,
  MIN_MAX_FRAME_BYTES,
  NORMAL_CLOSE_CODE,
  PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '../../constants.js';
import { createFrame } from '../../create-frame.js';
import { ProtocolError } from '../../errors.js';
import { signChallenge } from '../../identity/sign-challenge.js';
import { signManifest } from '../../identity/sign-manifest.js';
import { signOwnerProof } from '../../identity/sign-owner-proof.js';
import type { Frame } from '../../messages.js';
import { parseFrame } from '../../parse-frame.js';
import { ignoresBadFrame } from './ignores-bad-frame.js';
import { referenceManifest } from './reference-manifest.js';
import { withMediaModels } from './reference-media.js';
import { acceptJob } from './reference-node-jobs.js';
import { ReferenceNodeSession, type ReferenceNodeSettings } from './reference-node-session.js';
import { ReferencePrefixCache } from './reference-prefix-cache.js';
import { withKitModel } from './reference-verify.js';

/** Longest wait between reconnect attempts. */
export const MAX_RECONNECT_DELAY_MS = 30_000;

export type ReferenceNodeOptions = {
  /** The coordinator's WebSocket URL. */
  url: string;
  /** The node key (default: a fresh one). */
  privateKey?: Hex;
  /** The owner wallet's key, to send an owner proof. */
  ownerPrivateKey?: Hex;
  /** Jobs run at once (default 2). */
  capacity?: number;
  /** Delay before reconnecting after a close (default 1000 ms), doubled after each failed session. */
  reconnectDelayMs?: number;
  /** Delay between generated tokens (default 2 ms). */
  tokenDelayMs?: number;
  /**
   * Break the rule one node conformance scenario checks (named after it; `chat_stream_tokens`:
   * chunks whose `tokens` overstate the completion; `verify_sampling`: verify answers that ignore
   * the job's sampling settings). Only for proving that the kit catches each violation; a real
   * node never sets this.
   */
  breaks?: string;
  /**
   * v0.5: keep a (fake) prefix cache — report `cached_tokens` and advertise prefix keys in ping and
   * presence (default true); false: a node that claims no cache, as every node before v0.5.
   */
  prefixCache?: boolean;
};

export type ReferenceNode = {
  nodeId: Hex;
  /** Number of sessions opened so far. */
  readonly sessions: number;
  /** Stops reconnecting, says bye and closes. */
  stop(): Promise<void>;
};

/**
 * A minimal, correct gpumesh node: handshake, signed manifest, presence with load, heartbeat, chat
 * (streamed or not) and embedding jobs from a fake model, cancel, drain, strict frame checks, and
 * reconnects. Third parties can read it as an executable companion to NODE_PROTOCOL.md.
 */
export function startReferenceNode(options: ReferenceNodeOptions): ReferenceNode {
  const account = privateKeyToAccount(options.privateKey ?? generatePrivateKey());
  const owner = options.ownerPrivateKey ? privateKeyToAccount(options.ownerPrivateKey) : undefined;
  const reconnectDelayMs = options.reconnectDelayMs ?? 1000;
  const breaks = options.breaks;
  let stopped = false;
  let sessions = 0;
  let failures = 0;
  let current: ReferenceNodeSession | undefined;
  let reconnectTimer: NodeJS.Timeout | undefined;

  const settings: ReferenceNodeSettings = {
    capacity: options.capacity ?? 2,
    tokenDelayMs: options.tokenDelayMs ?? 2,
    breaks,
    // Chat and embedding (reference-manifest.ts), vision and voice, and the kit model.
    manifest: () => withKitModel(withMediaModels(referenceManifest(account.address))),
    ...(options.prefixCache !== false
      ? { prefixCache: new ReferencePrefixCache(breaks === 'prefix_cache') }
      : {}),
  };

  /** `admitted`: this frame is the manifest_ack that made the session ready. */
  const handle = async (session: ReferenceNodeSession, frame: Frame, admitted: boolean) => {
    switch (frame.type) {
      case 'challenge': {
        const signer = breaks === 'handshake' ? privateKeyToAccount(generatePrivateKey()) : account;
        const signature = await signChallenge(frame, {
          address: account.address,
          signMessage: signer.signMessage,
        });
        const proof = owner ? await signOwnerProof(account.address, owner) : undefined;
        session.send(createFrame('auth', { signature, ...(proof ? { owner: proof } : {}) }));
        return;
      }
      case 'welcome': {
        if (!SUPPORTED_PROTOCOL_VERSIONS.includes(frame.version)) {
          return session.fail(new ProtocolError('unsupported_version'));
        }
        session.maxFrameBytes = frame.maxFrameBytes;
        session.ttlMs = frame.ttlMs;
        session.tierLimit = frame.maxConcurrentJobs ?? Number.POSITIVE_INFINITY;
        if (breaks !== 'heartbeat') {
          session.heartbeat = setInterval(() => {
            if (Date.now() - session.lastHeardAt > session.ttlMs && breaks !== 'node_heartbeat_timeout') {
              return session.fail(new ProtocolError('heartbeat_timeout'));
            }
            session.send(createFrame('ping', { ts: Date.now(), ...session.advertised() }));
          }, frame.heartbeatIntervalMs);
        }
        const manifest = settings.manifest();
        if (owner) manifest.owner = owner.address;
        const signer = breaks === 'manifest' ? privateKeyToAccount(generatePrivateKey()) : account;
        session.send(createFrame('manifest', { manifest, signature: await signManifest(manifest, signer) }));
        return;
      }
      case 'manifest_ack':
        if (admitted) session.reportPresence();
        return;
      case 'ping':
        return session.send(createFrame('pong', { ts: frame.ts }));
      case 'job':
        return acceptJob(session, frame);
      case 'cancel': {
        const job = session.jobs.get(frame.jobId);
        if (job) job.cancelled = true;
        return;
      }
      case 'drain':
        if (breaks === 'drain') return;
        if (session.status !== 'draining') {
          session.status = 'draining';
          session.reportPresence();
          // Jobs still running at the deadline are cancelled (each ends with job_cancelled).
          const deadline = setTimeout(() => {
            if (breaks === 'drain_running') {
              // Broken on purpose: leaves at the deadline with its jobs still running.
              session.leave('drained');
              return;
            }
            for (const job of session.jobs.values()) job.cancelled = true;
          }, frame.deadlineMs);
          session.ws.once('close', () => clearTimeout(deadline));
        }
        return session.leaveIfDrained();
      case 'bye':
        session.ws.close(NORMAL_CLOSE_CODE, 'bye');
        return;
      case 'error':
        // A job-scoped error (unknown_job) or a session error without a close is logged, nothing more
        // (§4); broken on purpose, the node leaves.
        if (breaks === 'coordinator_errors') session.ws.close(NORMAL_CLOSE_CODE, 'error');
        return;
      default:
        // pong frames need no answer.
        return;
    }
  };

  const connect = () => {
    if (stopped) return;
    sessions++;
    // The socket accepts up to the default limit; the session's own limit is enforced by parseFrame.
    const ws = new WebSocket(options.url, { maxPayload: DEFAULT_MAX_FRAME_BYTES * 2 });
    // Until welcome the limit is 65,536 bytes both ways (§2).
    const session = new ReferenceNodeSession(
      ws,
      settings,
      breaks === 'oversized_before_welcome' ? DEFAULT_MAX_FRAME_BYTES : MIN_MAX_FRAME_BYTES,
    );
    current = session;
    ws.on('open', () => {
      session.send(
        createFrame('hello', {
          nodeId: account.address,
          role: 'cpu',
          versions: [...SUPPORTED_PROTOCOL_VERSIONS],
          software: { name: 'gpumesh-reference-node', version: String(PROTOCOL_VERSION) },
        }),
      );
    });
    ws.on('message', (data, binary) => {
      session.lastHeardAt = Date.now();
      let frame: Frame;
      try {
        const welcomed = session.order.phase !== 'hello' && session.order.phase !== 'auth';
        const maxBytes =
          breaks === 'oversized' && welcomed ? Number.POSITIVE_INFINITY : session.maxFrameBytes;
        frame = parseFrame(data as Buffer, { maxBytes, binary });
      } catch (error) {
        if (ignoresBadFrame(breaks, error, data as Buffer, binary)) return;
        return session.fail(error instanceof ProtocolError ? error : new ProtocolError('internal_error'));
      }
      let admitted = false;
      try {
        admitted = session.order.receive(frame.type) && frame.type === 'manifest_ack';
      } catch (error) {
        // Broken on purpose: the frame is handled as if it were in order.
        const wrongSide = breaks === 'wrong_direction' && frame.type === 'result';
        const outOfPhase = breaks === 'out_of_order' && frame.type !== 'result';
        if (!outOfPhase && !wrongSide) return session.fail(error as ProtocolError);
        if (wrongSide) return;
      }
      handle(session, frame, admitted).catch(() => session.fail(new ProtocolError('internal_error')));
    });
    ws.on('error', () => {
      // 'close' follows and schedules the reconnect.
    });
    ws.on('close', () => {
      clearInterval(session.heartbeat);
      for (const job of session.jobs.values()) job.cancelled = true;
      // Back off while sessions fail before ready (1×, 2×, 4× … the base delay, at most 30 s, ±20 %).
      failures = session.order.ready ? 0 : failures + 1;
      const delay =
        Math.min(reconnectDelayMs * 2 ** failures, MAX_RECONNECT_DELAY_MS) * (0.8 + 0.4 * Math.random());
      if (!stopped) reconnectTimer = setTimeout(connect, delay);
    });
  };

  connect();
  return {
    nodeId: account.address,
    get sessions() {
      return sessions;
    },
    async stop() {
      stopped = true;
      clearTimeout(reconnectTimer);
      const session = current;
      if (!session || session.ws.readyState === WebSocket.CLOSED) return;
      if (session.ws.readyState === WebSocket.OPEN) {
        session.status = 'offline';
        if (session.order.ready) session.reportPresence();
        session.send(createFrame('bye', { reason: 'shutdown' }));
        session.ws.close(NORMAL_CLOSE_CODE, 'shutdown');
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          session.ws.terminate();
          resolve();
        }, 1000);
        session.ws.once('close', () => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
  };
}
