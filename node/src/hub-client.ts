import {
  createFrame,
  DEFAULT_MAX_FRAME_BYTES,
  encodeFrame,
  errorFrame,
  type Frame,
  type JobFrame,
  knownScopes,
  MIN_MAX_FRAME_BYTES,
  NORMAL_CLOSE_CODE,
  type PrefixCache,
  type PresenceStatus,
  ProtocolError,
  type ProtocolErrorCode,
  parseFrame,
  SUPPORTED_PROTOCOL_VERSIONS,
  signChallenge,
  signManifest,
  type TierName,
  ttlMsFor,
  type WelcomeFrame,
} from '@gpumesh/protocol';
import { sendCoalesced } from '@gpumesh/protocol/internal';
import WebSocket from 'ws';
import { DEFAULT_CHUNK_FLUSH_MS } from './chunk-flush.js';
import type { HubClientOptions, HubLogger, HubState } from './hub-client-options.js';
import { hubCloseVerdict } from './hub-close-verdict.js';
import { reconnectDelayMs } from './reconnect-delay.js';
import { type RunningHubJob, runHubJob } from './run-hub-job.js';
import { SOFTWARE } from './software.js';
import { tierSummary } from './tier-summary.js';

const SILENT_LOG: HubLogger = { info() {}, warn() {} };

/**
 * The node's side of NODE_PROTOCOL.md over one WebSocket at a time: hello → challenge → auth →
 * welcome → manifest → manifest_ack → presence; heartbeats at the coordinator's interval; jobs
 * answered with chunk/result/error; cancel; drain. Every inbound frame is validated. When the socket
 * ends for any reason the client reconnects forever, with capped exponential backoff and jitter,
 * until `stop()` or `shutdown()`.
 */
export class HubClient {
  state: HubState = 'idle';
  /** The status last reported in `presence`. */
  presence: PresenceStatus = 'offline';
  private ws?: WebSocket;
  private welcome?: WelcomeFrame;
  private readonly jobs = new Map<string, RunningHubJob>();
  private heartbeat?: NodeJS.Timeout;
  private reconnectTimer?: NodeJS.Timeout;
  /** Which of the hub URLs the next connection uses. */
  private urlIndex = 0;
  /**
   * Jobs this node runs at once: its own capacity, capped by the tier's job limit that welcome
   * names (NODE_PROTOCOL.md §7), so `busy` means what the coordinator thinks it means.
   */
  get capacity(): number {
    return Math.min(this.options.capacity, this.welcome?.maxConcurrentJobs ?? Number.POSITIVE_INFINITY);
  }

  /** The tier the coordinator granted in this session's welcome (undefined before one). */
  get tier(): TierName | undefined {
    return this.welcome?.tier;
  }

  /** The message of the hub's last session-level error frame (said before it closes). */
  private lastHubError: string | undefined;
  /** This node closed the current socket itself (a protocol error it found). */
  private closedByUs = false;
  private lastHeard = 0;
  private attempt = 0;
  private leaving?: Promise<void>;
  private shuttingDown?: Promise<void>;
  private stopping = false;
  private readonly log: HubLogger;
  private readonly random: () => number;

  constructor(private readonly options: HubClientOptions) {
    this.log = options.log ?? SILENT_LOG;
    this.random = options.random ?? Math.random;
  }

  /** Jobs running now. */
  get inFlight(): number {
    return this.jobs.size;
  }

  /** True while an admitted session is open. */
  get connected(): boolean {
    return (this.state === 'online' || this.state === 'draining') && this.ws?.readyState === WebSocket.OPEN;
  }

  /** Opens the first session; later ones open by themselves. */
  start(): void {
    if (this.state !== 'idle') return;
    this.connect();
  }

  /**
   * Graceful leave (SIGTERM/SIGINT): report draining, take no new job, let in-flight jobs finish
   * (up to `timeoutMs`, then cancel them), report offline, say bye, close, and stay closed.
   */
  shutdown(timeoutMs: number, reason = 'shutdown'): Promise<void> {
    this.stopping = true;
    // A drain the coordinator asked for may be under way: let it finish, then stay closed.
    this.shuttingDown ??= (this.leaving ?? Promise.resolve()).then(() =>
      this.leave(timeoutMs, reason, false),
    );
    return this.shuttingDown;
  }

  /** Closes at once without ceremony (tests). */
  stop(): void {
    this.state = 'stopped';
    clearTimeout(this.reconnectTimer);
    this.endSession();
    this.ws?.terminate();
  }

  /** The hub URL the next connection goes to (the options' URLs in turn). */
  private get url(): string {
    const urls = typeof this.options.url === 'string' ? [this.options.url] : this.options.url;
    return urls[this.urlIndex % urls.length]!;
  }

  private connect() {
    this.state = 'connecting';
    const ws = new WebSocket(this.url, {
      maxPayload: DEFAULT_MAX_FRAME_BYTES * 2,
      handshakeTimeout: 10_000,
    });
    this.ws = ws;
    ws.on('open', () => {
      this.state = 'handshake';
      this.lastHeard = Date.now();
      this.send(
        createFrame('hello', {
          nodeId: this.options.account.address,
          role: this.options.role,
          versions: [...SUPPORTED_PROTOCOL_VERSIONS],
          software: SOFTWARE,
        }),
      );
    });
    ws.on('message', (data, isBinary) => {
      if (ws !== this.ws) return;
      this.lastHeard = Date.now();
      let frame: Frame;
      try {
        frame = parseFrame(data as Buffer, {
          binary: isBinary,
          // Until welcome the limit is 65,536 bytes both ways (NODE_PROTOCOL.md §2).
          maxBytes: this.welcome?.maxFrameBytes ?? MIN_MAX_FRAME_BYTES,
        });
      } catch (error) {
        return this.fail(error instanceof ProtocolError ? error : new ProtocolError('malformed_frame'));
      }
      this.receive(frame).catch((error: unknown) =>
        this.fail(error instanceof ProtocolError ? error : new ProtocolError('internal_error')),
      );
    });
    ws.on('close', (code, reason) => {
      if (ws !== this.ws) return;
      this.log.info('hub session closed', { code, reason: reason.toString() });
      this.endSession();
      const verdict = hubCloseVerdict(code, this.closedByUs, this.lastHubError);
      this.closedByUs = false;
      if (verdict.refused !== undefined) {
        this.state = 'stopped';
        this.options.onRefused?.(verdict.refused);
        return;
      }
      this.scheduleReconnect(verdict.longestDelay);
    });
    ws.on('error', (error) => {
      this.log.warn('hub socket error', { error: error.message });
    });
  }

  private async receive(frame: Frame) {
    switch (frame.type) {
      case 'challenge': {
        if (this.state !== 'handshake' || this.welcome) throw new ProtocolError('out_of_order', 'challenge');
        const signature = await signChallenge(frame, this.options.account);
        this.send(
          createFrame('auth', { signature, ...(this.options.owner ? { owner: this.options.owner } : {}) }),
        );
        return;
      }
      case 'welcome': {
        if (this.state !== 'handshake' || this.welcome) throw new ProtocolError('out_of_order', 'welcome');
        this.welcome = frame;
        this.startHeartbeat(frame.heartbeatIntervalMs, frame.ttlMs);
        // A scope of a later protocol version is ignored, not claimed (NODE_PROTOCOL.md §2).
        const manifest = this.options.manifest(knownScopes(frame.scopes));
        this.send(
          createFrame('manifest', {
            manifest,
            signature: await signManifest(manifest, this.options.account),
          }),
        );
        return;
      }
      case 'manifest_ack': {
        if (this.state !== 'handshake' || !this.welcome)
          throw new ProtocolError('out_of_order', 'manifest_ack');
        this.state = 'online';
        this.attempt = 0;
        this.log.info('hub session admitted', {
          sessionId: this.welcome.sessionId,
          models: frame.models,
          tier: tierSummary(this.welcome.tier),
        });
        this.reportPresence();
        return;
      }
      case 'ping':
        this.send(createFrame('pong', { ts: frame.ts }));
        return;
      case 'pong':
        return;
      case 'job':
        if (this.state !== 'online' && this.state !== 'draining')
          throw new ProtocolError('out_of_order', 'job');
        this.startJob(frame);
        return;
      case 'cancel':
        this.jobs.get(frame.jobId)?.controller.abort();
        return;
      case 'drain':
        if (this.state !== 'online' && this.state !== 'draining')
          throw new ProtocolError('out_of_order', 'drain');
        this.leaving ??= this.leave(frame.deadlineMs, 'drained by the coordinator', true).finally(() => {
          this.leaving = undefined;
        });
        return;
      case 'error':
        if (!frame.jobId && frame.message) this.lastHubError = frame.message;
        this.log.warn('hub reported an error', {
          code: frame.code,
          message: frame.message,
          jobId: frame.jobId,
        });
        return;
      case 'bye':
        this.log.info('hub said bye', { reason: frame.reason });
        return;
      default:
        // A frame only nodes send (hello, auth, manifest, presence, chunk, result) is out of order here.
        throw new ProtocolError('out_of_order', frame.type);
    }
  }

  private startJob(job: JobFrame) {
    const refuse = (code: ProtocolErrorCode) => this.send(errorFrame(code, { jobId: job.jobId }));
    if (this.jobs.has(job.jobId)) return refuse('duplicate_job');
    if (this.state === 'draining' || this.leaving || this.stopping) return refuse('draining');
    if (this.jobs.size >= this.capacity) return refuse('overloaded');

    const ws = this.ws;
    const running = runHubJob(job, {
      runJob: this.options.runJob,
      chunkFlushMs: this.options.chunkFlushMs ?? DEFAULT_CHUNK_FLUSH_MS,
      // Frames of a job go only to the session it came on.
      send: (frame) => {
        if (ws === this.ws) this.send(frame);
      },
      maxFrameBytes: () => this.welcome?.maxFrameBytes ?? MIN_MAX_FRAME_BYTES,
    });
    const done = running.done.finally(() => {
      this.jobs.delete(job.jobId);
      // On the session now open (a job of a lost session ends after the reconnect: its slot is
      // free again, and the new session must hear it or it would stay busy).
      if (this.connected) this.reportPresence();
    });
    this.jobs.set(job.jobId, { controller: running.controller, done });
    this.reportPresence();
  }

  private async leave(deadlineMs: number, reason: string, reconnect: boolean) {
    clearTimeout(this.reconnectTimer);
    if (!reconnect) this.state = this.connected ? 'draining' : 'stopped';
    else this.state = 'draining';
    if (this.connected) this.reportPresence();
    const inFlight = [...this.jobs.values()];
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, deadlineMs);
    });
    await Promise.race([Promise.all(inFlight.map((job) => job.done)), deadline]);
    clearTimeout(timer);
    for (const job of this.jobs.values()) job.controller.abort();
    await Promise.all([...this.jobs.values()].map((job) => job.done));
    const ws = this.ws;
    if (ws && ws.readyState === WebSocket.OPEN && this.welcome) {
      this.presence = 'offline';
      this.send(
        createFrame('presence', {
          status: 'offline',
          load: { inFlight: 0, capacity: this.capacity },
        }),
      );
      this.send(createFrame('bye', { reason }));
      const closed = new Promise((resolve) => ws.once('close', resolve));
      if (!reconnect) this.state = 'stopped';
      ws.close(NORMAL_CLOSE_CODE, reason);
      await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 2_000).unref())]);
    }
    if (!reconnect) {
      this.state = 'stopped';
      this.ws?.terminate();
    }
  }

  private reportPresence() {
    if (!this.welcome || this.ws?.readyState !== WebSocket.OPEN) return;
    const inFlight = this.jobs.size;
    const { capacity } = this;
    const status: PresenceStatus =
      this.state === 'draining' ? 'draining' : inFlight >= capacity ? 'busy' : 'online';
    this.presence = status;
    this.send(createFrame('presence', { status, load: { inFlight, capacity }, ...this.prefixCache() }));
  }

  private startHeartbeat(intervalMs: number, ttlMs: number) {
    clearInterval(this.heartbeat);
    const ttl = Math.max(ttlMs, ttlMsFor(intervalMs));
    this.heartbeat = setInterval(() => {
      if (Date.now() - this.lastHeard > ttl) return this.fail(new ProtocolError('heartbeat_timeout'));
      this.send(createFrame('ping', { ts: Date.now(), ...this.prefixCache() }));
    }, intervalMs);
  }

  /** `{prefixCache}` for a ping or presence when the node keeps one (v0.5), else nothing. */
  private prefixCache(): { prefixCache?: PrefixCache } {
    return this.options.prefixCache ? { prefixCache: this.options.prefixCache() } : {};
  }

  /** Reports a session-ending protocol error to the peer, then closes with its code. */
  private fail(error: ProtocolError) {
    this.log.warn('hub protocol error', { code: error.code, message: error.message });
    const ws = this.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN) return;
    this.send(errorFrame(error));
    this.closedByUs = true;
    ws.close(error.closeCode ?? 4000, error.code);
  }

  /**
   * Frames sent in one turn of the event loop leave in one socket write, at its end: a job's last
   * chunk, its result and the presence after it are one write instead of three, and a write never
   * runs before the decode the token loop queues next (each write cost the daemon's main thread
   * ~100–300 µs on this 2-core machine).
   */
  private send(frame: Frame) {
    if (this.ws?.readyState === WebSocket.OPEN) sendCoalesced(this.ws, encodeFrame(frame));
  }

  /** Clears the session: timers stop, running jobs are abandoned (the coordinator fails them). */
  private endSession() {
    clearInterval(this.heartbeat);
    this.heartbeat = undefined;
    this.welcome = undefined;
    this.presence = 'offline';
    for (const job of this.jobs.values()) job.controller.abort();
  }

  private scheduleReconnect(longest = false) {
    if (this.state === 'stopped' || this.stopping) {
      this.state = 'stopped';
      return;
    }
    const { reconnectMinMs, reconnectMaxMs } = this.options;
    const delay = longest
      ? reconnectMaxMs
      : reconnectDelayMs(this.attempt, reconnectMinMs, reconnectMaxMs, this.random);
    this.attempt++;
    this.urlIndex++;
    this.state = 'connecting';
    this.log.info('reconnecting', { inMs: delay, attempt: this.attempt, url: this.url });
    this.reconnectTimer = setTimeout(() => this.connect(), delay);
  }
}
