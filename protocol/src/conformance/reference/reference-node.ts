import { randomUUID } from 'node:crypto';
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
import { encodeFrame } from '../../encode-frame.js';
import { errorFrame } from '../../error-frame.js';
import { ProtocolError, type ProtocolErrorCode } from '../../errors.js';
import { signChallenge } from '../../identity/sign-challenge.js';
import { signManifest } from '../../identity/sign-manifest.js';
import { signOwnerProof } from '../../identity/sign-owner-proof.js';
import type { ModelOffer } from '../../manifest.js';
import type { Frame, JobFrame, PresenceStatus } from '../../messages.js';
import { parseFrame } from '../../parse-frame.js';
import { SessionOrder } from '../../session-order.js';
import { countPromptTokens, fakeEmbedding, fakeToken, usageOf } from './fake-inference.js';
import { referenceManifest } from './reference-manifest.js';
import { fakeSpeech, fakeTranscription, REFERENCE_MEDIA_MODELS, withMediaModels } from './reference-media.js';
import { REFERENCE_KIT_MODEL, referenceVerify, withKitModel } from './reference-verify.js';

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
};

export type ReferenceNode = {
  nodeId: Hex;
  /** Number of sessions opened so far. */
  readonly sessions: number;
  /** Stops reconnecting, says bye and closes. */
  stop(): Promise<void>;
};

type Session = {
  ws: WebSocket;
  order: SessionOrder;
  status: PresenceStatus;
  maxFrameBytes: number;
  jobs: Map<string, { cancelled: boolean }>;
  heartbeat?: NodeJS.Timeout;
  lastHeardAt: number;
  ttlMs: number;
  /** welcome.maxConcurrentJobs (v0.1): the tier's job limit at this coordinator. */
  tierLimit: number;
};

/**
 * A minimal, correct gpumesh node: handshake, signed manifest, presence with load, heartbeat, chat
 * (streamed or not) and embedding jobs from a fake model, cancel, drain, strict frame checks, and
 * reconnects. Third parties can read it as an executable companion to NODE_PROTOCOL.md.
 */
export function startReferenceNode(options: ReferenceNodeOptions): ReferenceNode {
  const account = privateKeyToAccount(options.privateKey ?? generatePrivateKey());
  const owner = options.ownerPrivateKey ? privateKeyToAccount(options.ownerPrivateKey) : undefined;
  const capacity = options.capacity ?? 2;
  const reconnectDelayMs = options.reconnectDelayMs ?? 1000;
  const tokenDelayMs = options.tokenDelayMs ?? 2;
  const breaks = options.breaks;
  let stopped = false;
  let sessions = 0;
  let failures = 0;
  let current: Session | undefined;
  let reconnectTimer: NodeJS.Timeout | undefined;

  /** The manifest: chat and embedding (reference-manifest.ts), vision and voice, and the kit model. */
  const manifestOf = () => withKitModel(withMediaModels(referenceManifest(account.address)));

  const send = (session: Session, frame: Frame) => {
    if (session.ws.readyState === WebSocket.OPEN) session.ws.send(encodeFrame(frame));
  };

  const fail = (session: Session, error: ProtocolError) => {
    send(session, errorFrame(error));
    if (error.closeCode !== null) session.ws.close(error.closeCode, error.code);
  };

  /** Jobs this session runs at once: the node's own capacity capped by the tier's limit (§7). */
  const capacityOf = (session: Session) => Math.min(capacity, session.tierLimit);

  const reportPresence = (session: Session) => {
    const inFlight = session.jobs.size;
    const cap = capacityOf(session);
    if (session.status === 'online' || session.status === 'busy') {
      session.status = inFlight >= cap ? 'busy' : 'online';
    }
    // Broken on purpose: the capacity reported ignores the tier's limit.
    const reported = breaks === 'tier_limit' ? capacity : cap;
    send(
      session,
      createFrame('presence', { status: session.status, load: { inFlight, capacity: reported } }),
    );
  };

  const leaveIfDrained = (session: Session) => {
    if (session.status !== 'draining' || session.jobs.size > 0) return;
    session.status = 'offline';
    reportPresence(session);
    send(session, createFrame('bye', { reason: 'drained' }));
    session.ws.close(NORMAL_CLOSE_CODE, 'drained');
  };

  const finishJob = (session: Session, jobId: string) => {
    session.jobs.delete(jobId);
    if (breaks !== 'presence') reportPresence(session);
    leaveIfDrained(session);
  };

  const runJob = async (session: Session, job: JobFrame) => {
    const state = { cancelled: false };
    session.jobs.set(job.jobId, state);
    // Broken on purpose (presence_order): the job is counted only after its first chunk.
    if (breaks !== 'presence' && breaks !== 'presence_order') reportPresence(session);
    const started = Date.now();
    const promptTokens = countPromptTokens(job.request);
    const id = `chatcmpl-${randomUUID()}`;
    const created = Math.floor(started / 1000);

    if (job.kind === 'embedding') {
      const input = job.request.input;
      let inputs = Array.isArray(input) ? input.map(String) : [String(input ?? '')];
      if (breaks === 'embedding') inputs = inputs.slice(0, 1);
      if (breaks === 'embedding_stream_flag' && job.stream) {
        const chunk = { object: 'list', data: [], model: job.model };
        send(session, createFrame('chunk', { jobId: job.jobId, seq: 0, chunk }));
      }
      const data = inputs.map((text, index) => ({
        object: 'embedding',
        index,
        embedding: fakeEmbedding(text),
      }));
      const result = createFrame('result', {
        jobId: job.jobId,
        response: { object: 'list', data, model: job.model, usage: usageOf(promptTokens, 0) },
      });
      // A result no frame can hold is never sent (§9 "Odd jobs"), unless broken on purpose.
      const tooLarge = Buffer.byteLength(encodeFrame(result)) > session.maxFrameBytes;
      if (tooLarge && breaks !== 'oversized_result') {
        send(
          session,
          errorFrame('invalid_request', { jobId: job.jobId, message: 'The response is too large.' }),
        );
      } else send(session, result);
      finishJob(session, job.jobId);
      return;
    }

    const maxTokens = typeof job.request.max_tokens === 'number' ? job.request.max_tokens : 16;
    const completion = job.kind === 'completion';
    const brokenChat = completion ? undefined : breaks;
    const stream =
      brokenChat === 'chat_stream' && job.kind === 'chat'
        ? false
        : (brokenChat === 'chat' && job.kind === 'chat') || (breaks === 'vision' && job.kind === 'vision')
          ? true
          : job.stream;
    let text = '';
    for (let i = 0; i < maxTokens; i++) {
      await new Promise((resolve) => setTimeout(resolve, tokenDelayMs));
      if (state.cancelled && breaks !== 'cancel') {
        send(session, errorFrame('job_cancelled', { jobId: job.jobId, message: 'cancelled' }));
        finishJob(session, job.jobId);
        return;
      }
      if (Date.now() - started > job.timeoutMs && breaks !== 'job_timeout') {
        send(session, errorFrame('job_timeout', { jobId: job.jobId, message: 'timed out' }));
        finishJob(session, job.jobId);
        return;
      }
      const token = fakeToken(i);
      text += token;
      if (stream) {
        const chunk =
          completion && breaks !== 'completion_stream'
            ? {
                id,
                object: 'text_completion',
                created,
                model: job.model,
                choices: [{ index: 0, text: token, finish_reason: null }],
              }
            : {
                id,
                object: 'chat.completion.chunk',
                created,
                model: job.model,
                choices: [
                  {
                    index: 0,
                    delta: i === 0 ? { role: 'assistant', content: token } : { content: token },
                    finish_reason: null,
                  },
                ],
              };
        send(
          session,
          createFrame('chunk', {
            jobId: job.jobId,
            seq: i,
            chunk,
            tokens: breaks === 'chat_stream_tokens' ? 2 : 1,
          }),
        );
      }
      if (breaks === 'presence_order' && i === 0) reportPresence(session);
    }
    const usage = usageOf(promptTokens, maxTokens);
    // A text completion answers with text (§9 "Kinds"); broken on purpose, with a chat message.
    const response =
      completion && breaks !== 'completion'
        ? {
            id,
            object: 'text_completion',
            created,
            model: job.model,
            choices: [{ index: 0, text, finish_reason: 'length' }],
            usage,
          }
        : {
            id,
            object: 'chat.completion',
            created,
            model: job.model,
            choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'length' }],
            usage,
          };
    send(session, createFrame('result', { jobId: job.jobId, response }));
    finishJob(session, job.jobId);
  };

  /** Speech and transcription from the fake engines of reference-media.ts. */
  const runVoiceJob = async (session: Session, job: JobFrame) => {
    session.jobs.set(job.jobId, { cancelled: false });
    if (breaks !== 'presence') reportPresence(session);
    await new Promise((resolve) => setTimeout(resolve, tokenDelayMs));
    if (job.kind === 'speech') {
      const speech = fakeSpeech(String(job.request.input ?? ''), breaks === 'speech');
      for (const [seq, chunk] of speech.chunks.entries())
        send(session, createFrame('chunk', { jobId: job.jobId, seq, chunk }));
      send(session, createFrame('result', { jobId: job.jobId, response: speech.response }));
    } else {
      const file = job.request.file as { data?: unknown } | undefined;
      const response = fakeTranscription(String(file?.data ?? ''), breaks === 'transcription');
      send(
        session,
        response
          ? createFrame('result', { jobId: job.jobId, response })
          : errorFrame('invalid_request', { jobId: job.jobId, message: 'not a WAV file' }),
      );
    }
    finishJob(session, job.jobId);
  };

  /** A verify job, scored by the reference's stand-in (reference-verify.ts). */
  const runVerifyJob = async (session: Session, job: JobFrame, served: ModelOffer) => {
    session.jobs.set(job.jobId, { cancelled: false });
    if (breaks !== 'presence') reportPresence(session);
    await new Promise((resolve) => setTimeout(resolve, tokenDelayMs));
    const verified = referenceVerify(served, job.request, breaks);
    send(
      session,
      'response' in verified
        ? createFrame('result', { jobId: job.jobId, response: verified.response })
        : errorFrame(verified.error, { jobId: job.jobId, message: verified.message }),
    );
    finishJob(session, job.jobId);
  };

  const acceptJob = (session: Session, job: JobFrame) => {
    const refuse = (code: ProtocolErrorCode) =>
      send(session, errorFrame(code, { jobId: job.jobId, message: code }));
    const models = manifestOf().models;
    // job.model names the model; request.model (the client's name for it) is not looked at, except
    // when broken on purpose.
    const name = breaks === 'model_field' && job.kind !== 'verify' ? job.request.model : job.model;
    const served =
      models.find((m) => m.id === name) ??
      (breaks === 'model_not_found' ? models.find((m) => m.family === 'chat') : undefined);
    if (session.jobs.has(job.jobId) && breaks !== 'duplicate_job') return refuse('duplicate_job');
    if (session.status === 'draining' && breaks !== 'draining_refusal') return refuse('draining');
    if (session.jobs.size >= capacityOf(session) && breaks !== 'overloaded') return refuse('overloaded');
    if (!served) return refuse('model_not_found');
    if (job.kind === 'verify') return void runVerifyJob(session, job, served);
    if (served.id === REFERENCE_KIT_MODEL) {
      if (job.kind !== 'completion') return refuse('invalid_request');
      return void runJob(session, job);
    }
    if (REFERENCE_MEDIA_MODELS.includes(served)) {
      const fits =
        job.kind === 'vision'
          ? served.family === 'vision' && Array.isArray(job.request.messages)
          : (served.kinds as readonly string[] | undefined)?.includes(job.kind);
      if (!fits) return refuse('invalid_request');
      if (job.kind !== 'vision') return void runVoiceJob(session, job);
    } else {
      const family = job.kind === 'embedding' ? 'embedding' : 'chat';
      if ((served.family !== family || job.kind === 'vision') && breaks !== 'kind_mismatch')
        return refuse('invalid_request');
    }
    const prompt =
      job.kind === 'chat' || job.kind === 'vision'
        ? job.request.messages
        : job.kind === 'completion'
          ? job.request.prompt
          : 'ok';
    const valid = job.kind === 'chat' || job.kind === 'vision' ? Array.isArray(prompt) : prompt !== undefined;
    if (!valid && breaks !== 'invalid_request') return refuse('invalid_request');
    void runJob(session, job);
  };

  /** `admitted`: this frame is the manifest_ack that made the session ready. */
  const handle = async (session: Session, frame: Frame, admitted: boolean) => {
    switch (frame.type) {
      case 'challenge': {
        const signer = breaks === 'handshake' ? privateKeyToAccount(generatePrivateKey()) : account;
        const signature = await signChallenge(frame, {
          address: account.address,
          signMessage: signer.signMessage,
        });
        const proof = owner ? await signOwnerProof(account.address, owner) : undefined;
        send(session, createFrame('auth', { signature, ...(proof ? { owner: proof } : {}) }));
        return;
      }
      case 'welcome': {
        if (!SUPPORTED_PROTOCOL_VERSIONS.includes(frame.version)) {
          return fail(session, new ProtocolError('unsupported_version'));
        }
        session.maxFrameBytes = frame.maxFrameBytes;
        session.ttlMs = frame.ttlMs;
        session.tierLimit = frame.maxConcurrentJobs ?? Number.POSITIVE_INFINITY;
        if (breaks !== 'heartbeat') {
          session.heartbeat = setInterval(() => {
            if (Date.now() - session.lastHeardAt > session.ttlMs && breaks !== 'node_heartbeat_timeout') {
              return fail(session, new ProtocolError('heartbeat_timeout'));
            }
            send(session, createFrame('ping', { ts: Date.now() }));
          }, frame.heartbeatIntervalMs);
        }
        const manifest = manifestOf();
        if (owner) manifest.owner = owner.address;
        const signer = breaks === 'manifest' ? privateKeyToAccount(generatePrivateKey()) : account;
        send(session, createFrame('manifest', { manifest, signature: await signManifest(manifest, signer) }));
        return;
      }
      case 'manifest_ack':
        if (admitted) reportPresence(session);
        return;
      case 'ping':
        return send(session, createFrame('pong', { ts: frame.ts }));
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
          reportPresence(session);
          // Jobs still running at the deadline are cancelled (each ends with job_cancelled).
          const deadline = setTimeout(() => {
            if (breaks === 'drain_running') {
              // Broken on purpose: leaves at the deadline with its jobs still running.
              session.status = 'offline';
              reportPresence(session);
              send(session, createFrame('bye', { reason: 'drained' }));
              session.ws.close(NORMAL_CLOSE_CODE, 'drained');
              return;
            }
            for (const job of session.jobs.values()) job.cancelled = true;
          }, frame.deadlineMs);
          session.ws.once('close', () => clearTimeout(deadline));
        }
        return leaveIfDrained(session);
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
    const session: Session = {
      ws,
      order: new SessionOrder('node'),
      status: 'online',
      // Until welcome the limit is 65,536 bytes both ways (§2).
      maxFrameBytes: breaks === 'oversized_before_welcome' ? DEFAULT_MAX_FRAME_BYTES : MIN_MAX_FRAME_BYTES,
      jobs: new Map(),
      lastHeardAt: Date.now(),
      ttlMs: Number.POSITIVE_INFINITY,
      tierLimit: Number.POSITIVE_INFINITY,
    };
    current = session;
    ws.on('open', () => {
      send(
        session,
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
        if (
          breaks === 'malformed' &&
          !binary &&
          error instanceof ProtocolError &&
          error.code === 'malformed_frame'
        )
          return;
        if (ignoresBadFrame(breaks, error, data as Buffer, binary)) return;
        return fail(session, error instanceof ProtocolError ? error : new ProtocolError('internal_error'));
      }
      let admitted = false;
      try {
        admitted = session.order.receive(frame.type) && frame.type === 'manifest_ack';
      } catch (error) {
        // Broken on purpose: the frame is handled as if it were in order.
        const wrongSide = breaks === 'wrong_direction' && frame.type === 'result';
        const outOfPhase = breaks === 'out_of_order' && frame.type !== 'result';
        if (!outOfPhase && !wrongSide) return fail(session, error as ProtocolError);
        if (wrongSide) return;
      }
      handle(session, frame, admitted).catch(() => fail(session, new ProtocolError('internal_error')));
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
        if (session.order.ready) reportPresence(session);
        send(session, createFrame('bye', { reason: 'shutdown' }));
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

/** For the v0.1 bad-frame scenarios: whether a node broken on `breaks` lets this parse error pass. */
function ignoresBadFrame(breaks: string | undefined, error: unknown, data: Buffer, binary: boolean): boolean {
  if (!breaks || !(error instanceof ProtocolError)) return false;
  switch (breaks) {
    case 'unknown_type':
      return error.code === 'unknown_type';
    case 'binary':
      return binary;
    case 'wrong_version':
      return error.code === 'unsupported_version';
    case 'missing_version':
      return error.code === 'schema_violation' && !data.toString('utf8').includes('"v"');
    case 'schema_violation':
      return error.code === 'schema_violation' && data.toString('utf8').includes('"v"');
    default:
      return false;
  }
}
