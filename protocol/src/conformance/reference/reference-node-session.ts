import type WebSocket from 'ws';
import { NORMAL_CLOSE_CODE } from '../../constants.js';
import { createFrame } from '../../create-frame.js';
import { encodeFrame } from '../../encode-frame.js';
import { errorFrame } from '../../error-frame.js';
import type { ProtocolError } from '../../errors.js';
import type { Manifest } from '../../manifest.js';
import type { Frame, PresenceStatus } from '../../messages.js';
import { SessionOrder } from '../../session-order.js';
import type { ReferencePrefixCache } from './reference-prefix-cache.js';

/** What every session of one reference node shares. */
export type ReferenceNodeSettings = {
  /** Jobs run at once, before the tier's limit. */
  capacity: number;
  /** Delay between generated tokens. */
  tokenDelayMs: number;
  /** The rule this node breaks on purpose (ReferenceNodeOptions.breaks). */
  breaks: string | undefined;
  /** The manifest it publishes. */
  manifest: () => Manifest;
  /** v0.5: its (fake) prefix cache, advertised in ping and presence; absent: it claims none. */
  prefixCache?: ReferencePrefixCache;
};

/**
 * One session of the reference node with the coordinator: its phase, presence and running jobs, and
 * the frames it sends about them (presence with load, leaving once drained).
 */
export class ReferenceNodeSession {
  readonly order = new SessionOrder('node');
  status: PresenceStatus = 'online';
  /** The frame limit: MIN_MAX_FRAME_BYTES until welcome (§2), then welcome's. */
  maxFrameBytes: number;
  readonly jobs = new Map<string, { cancelled: boolean }>();
  heartbeat?: NodeJS.Timeout;
  lastHeardAt = Date.now();
  ttlMs = Number.POSITIVE_INFINITY;
  /** welcome.maxConcurrentJobs (v0.1): the tier's job limit at this coordinator. */
  tierLimit = Number.POSITIVE_INFINITY;

  constructor(
    readonly ws: WebSocket,
    readonly settings: ReferenceNodeSettings,
    maxFrameBytes: number,
  ) {
    this.maxFrameBytes = maxFrameBytes;
  }

  get breaks(): string | undefined {
    return this.settings.breaks;
  }

  /** Jobs this session runs at once: the node's own capacity capped by the tier's limit (§7). */
  get capacity(): number {
    return Math.min(this.settings.capacity, this.tierLimit);
  }

  send(frame: Frame): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(encodeFrame(frame));
  }

  /** Reports a session-ending error, then closes with its code. */
  fail(error: ProtocolError): void {
    this.send(errorFrame(error));
    if (error.closeCode !== null) this.ws.close(error.closeCode, error.code);
  }

  reportPresence(): void {
    const inFlight = this.jobs.size;
    const cap = this.capacity;
    if (this.status === 'online' || this.status === 'busy') {
      this.status = inFlight >= cap ? 'busy' : 'online';
    }
    // Broken on purpose: the capacity reported ignores the tier's limit.
    const reported = this.breaks === 'tier_limit' ? this.settings.capacity : cap;
    this.send(
      createFrame('presence', {
        status: this.status,
        load: { inFlight, capacity: reported },
        ...this.advertised(),
      }),
    );
  }

  /** `{prefixCache}` for a ping or presence when the node keeps one (v0.5), else nothing. */
  advertised() {
    const cache = this.settings.prefixCache;
    return cache ? { prefixCache: cache.advertised() } : {};
  }

  /** Once draining and the last job ended: presence offline, bye, close 1000. */
  leaveIfDrained(): void {
    if (this.status !== 'draining' || this.jobs.size > 0) return;
    this.leave('drained');
  }

  /** Presence offline, bye and close 1000, with `reason`. */
  leave(reason: string): void {
    this.status = 'offline';
    this.reportPresence();
    this.send(createFrame('bye', { reason }));
    this.ws.close(NORMAL_CLOSE_CODE, reason);
  }

  finishJob(jobId: string): void {
    this.jobs.delete(jobId);
    if (this.breaks !== 'presence') this.reportPresence();
    this.leaveIfDrained();
  }
}
