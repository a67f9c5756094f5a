import type WebSocket from 'ws';
import { encodeFrame } from '../encode-frame.js';
import { ProtocolError } from '../errors.js';
import type { Frame, FrameOf, FrameType } from '../messages.js';
import { parseFrame } from '../parse-frame.js';
import type { PrefixCache } from '../prefix-keys.js';
import { ConformanceFailure } from './failure.js';

/** Something that arrived from the peer: a valid frame, an invalid message, or the close. */
export type WireEvent =
  | { kind: 'frame'; frame: Frame; at: number }
  | { kind: 'invalid'; error: ProtocolError; at: number }
  | { kind: 'close'; code: number; reason: string; at: number };

export type FrameSocketOptions = {
  /** Largest message accepted from the peer. */
  maxBytes: number;
  /** Answer the peer's `ping` with `pong` (a conforming peer does). */
  autoPong?: boolean;
};

/**
 * The kit's view of one WebSocket: everything the peer sends is parsed and queued in order, so a
 * scenario reads it like a script (`expect('challenge')`). Pings are answered and timed, not queued.
 */
export class FrameSocket {
  readonly pingTimes: number[] = [];
  /** v0.5: every `prefixCache` the peer sent in a ping or presence, in order, with when it came. */
  readonly prefixCaches: { prefixCache: PrefixCache; at: number }[] = [];
  private prefixCacheWaiters: (() => void)[] = [];
  closed?: { code: number; reason: string; at: number };
  private readonly queue: WireEvent[] = [];
  private wake?: () => void;
  autoPong: boolean;
  maxBytes: number;
  private heartbeat?: NodeJS.Timeout;

  constructor(
    readonly ws: WebSocket,
    options: FrameSocketOptions,
  ) {
    this.autoPong = options.autoPong ?? true;
    this.maxBytes = options.maxBytes;
    ws.on('message', (data, isBinary) => this.receive(data as Buffer | Buffer[] | ArrayBuffer, isBinary));
    ws.on('close', (code, reason) => {
      this.stopHeartbeat();
      this.closed = { code, reason: reason.toString(), at: Date.now() };
      this.push({ kind: 'close', ...this.closed });
      for (const wake of this.prefixCacheWaiters.splice(0)) wake();
    });
    ws.on('error', () => {
      // A socket error is always followed by 'close', which the scenarios observe.
    });
  }

  private receive(data: Buffer | Buffer[] | ArrayBuffer, binary: boolean): void {
    const at = Date.now();
    try {
      const frame = parseFrame(data, { maxBytes: this.maxBytes, binary });
      if ((frame.type === 'ping' || frame.type === 'presence') && frame.prefixCache) {
        this.prefixCaches.push({ prefixCache: frame.prefixCache, at });
        for (const wake of this.prefixCacheWaiters.splice(0)) wake();
      }
      if (frame.type === 'ping') {
        this.pingTimes.push(at);
        if (this.autoPong) this.trySend({ v: 0, type: 'pong', ts: frame.ts });
        return;
      }
      this.push({ kind: 'frame', frame, at });
    } catch (error) {
      if (!(error instanceof ProtocolError)) throw error;
      this.push({ kind: 'invalid', error, at });
    }
  }

  private push(event: WireEvent): void {
    this.queue.push(event);
    this.wake?.();
  }

  /** The next event, or undefined after `timeoutMs`. */
  async next(timeoutMs: number): Promise<WireEvent | undefined> {
    const deadline = Date.now() + timeoutMs;
    while (this.queue.length === 0) {
      const left = deadline - Date.now();
      if (left <= 0) return undefined;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
    return this.queue.shift();
  }

  /**
   * The next frame, which must be of one of `types`; frames of `ignore` types are skipped.
   * @throws ConformanceFailure on anything else: another frame, an invalid message, a close, silence.
   */
  async expect<T extends FrameType>(
    types: T | readonly T[],
    timeoutMs: number,
    ignore: readonly FrameType[] = ['pong'],
  ): Promise<FrameOf<T>> {
    const wanted: readonly FrameType[] = Array.isArray(types) ? types : [types];
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const event = await this.next(deadline - Date.now());
      const what = `expected ${wanted.join(' or ')}`;
      if (!event) throw new ConformanceFailure(`${what}, got nothing within ${timeoutMs} ms`);
      if (event.kind === 'close') throw new ConformanceFailure(`${what}, the peer closed (${event.code})`);
      if (event.kind === 'invalid') {
        throw new ConformanceFailure(
          `${what}, got an invalid frame (${event.error.code}: ${event.error.message})`,
        );
      }
      if (wanted.includes(event.frame.type)) return event.frame as FrameOf<T>;
      if (!ignore.includes(event.frame.type))
        throw new ConformanceFailure(`${what}, got ${event.frame.type}`);
    }
  }

  /**
   * Waits for the peer to close. Frames before the close are returned too, so a scenario can check
   * for an `error` frame; invalid messages are reported as such.
   */
  async expectClose(timeoutMs: number): Promise<{ code: number; at: number; frames: Frame[] }> {
    const frames: Frame[] = [];
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const event = await this.next(deadline - Date.now());
      if (!event)
        throw new ConformanceFailure(`expected the peer to close within ${timeoutMs} ms; it did not`);
      if (event.kind === 'close') return { code: event.code, at: event.at, frames };
      if (event.kind === 'invalid') {
        throw new ConformanceFailure(`expected a close, got an invalid frame (${event.error.code})`);
      }
      frames.push(event.frame);
    }
  }

  /** Sends a frame (validated). */
  send(frame: Frame): void {
    this.ws.send(encodeFrame(frame));
  }

  /** Sends raw text or bytes (for malformed input). */
  sendRaw(data: string | Buffer): void {
    this.ws.send(data);
  }

  private trySend(frame: Frame): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(encodeFrame(frame));
  }

  /**
   * The first `prefixCache` the peer sent at or after `since` that `match` accepts, waiting up to
   * `timeoutMs` for one; undefined when none came.
   */
  async prefixCacheSince(
    since: number,
    match: (prefixCache: PrefixCache) => boolean,
    timeoutMs: number,
  ): Promise<PrefixCache | undefined> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.prefixCaches.find((seen) => seen.at >= since && match(seen.prefixCache));
      if (found) return found.prefixCache;
      const left = deadline - Date.now();
      if (left <= 0 || this.closed) return undefined;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.prefixCacheWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Sends `ping` every `intervalMs` (as a node does from welcome on) until stopHeartbeat or close. */
  startHeartbeat(intervalMs: number): void {
    this.stopHeartbeat();
    this.heartbeat = setInterval(() => this.trySend({ v: 0, type: 'ping', ts: Date.now() }), intervalMs);
  }

  stopHeartbeat(): void {
    clearInterval(this.heartbeat);
    this.heartbeat = undefined;
  }

  get open(): boolean {
    return this.ws.readyState === this.ws.OPEN;
  }

  /** Ends the session politely (bye + close 1000) unless it is already closing; waits for the close. */
  async end(reason: string, timeoutMs = 1000): Promise<void> {
    this.stopHeartbeat();
    if (this.ws.readyState === this.ws.OPEN) {
      this.trySend({ v: 0, type: 'bye', reason });
      this.ws.close(1000, reason);
    }
    if (this.closed) return;
    const deadline = Date.now() + timeoutMs;
    while (!this.closed && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    if (!this.closed) this.ws.terminate();
  }
}
