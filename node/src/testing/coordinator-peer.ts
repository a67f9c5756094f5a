import type { AddressInfo } from 'node:net';
import {
  createFrame,
  encodeFrame,
  type Frame,
  type FrameOf,
  type FrameType,
  parseFrame,
  SCOPES,
  verifyChallenge,
  verifyManifest,
  verifyOwnerProof,
} from '@gpumesh/protocol';
import { type WebSocket, WebSocketServer } from 'ws';

/** Short enough for tests to see TTL expiry, long enough that a loaded test machine keeps up. */
export const DEFAULT_PEER_HEARTBEAT_MS = 500;

/** One admitted node session as the coordinator side sees it. */
export type PeerSession = {
  ws: WebSocket;
  nodeId: string;
  /** The owner wallet the node proved, if any. */
  owner?: string;
  frames: Frame[];
  lastHeard: number;
  closedAt?: number;
  next<T extends FrameType>(
    type: T,
    match?: (frame: FrameOf<T>) => boolean,
    timeoutMs?: number,
  ): Promise<FrameOf<T>>;
};

/**
 * The coordinator's side of the protocol, enough to watch a real node process: verifies the
 * challenge signature and the manifest, acknowledges, and records every frame. A session counts as
 * offline at its close or after TTL without a frame, as a coordinator's presence tracking does.
 */
export class CoordinatorPeer {
  readonly wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  readonly sessions: PeerSession[] = [];
  private waiters: (() => void)[] = [];

  /** The heartbeat interval the peer grants in welcome; TTL is twice it. */
  readonly heartbeatIntervalMs: number;
  readonly ttlMs: number;

  constructor(options: { heartbeatIntervalMs?: number } = {}) {
    this.heartbeatIntervalMs = options.heartbeatIntervalMs ?? DEFAULT_PEER_HEARTBEAT_MS;
    this.ttlMs = 2 * this.heartbeatIntervalMs;
    this.wss.on('connection', (ws) => this.admit(ws));
  }

  get url() {
    return `ws://127.0.0.1:${(this.wss.address() as AddressInfo).port}/node`;
  }

  async nextSession(after: number, timeoutMs = 60_000): Promise<PeerSession> {
    const deadline = Date.now() + timeoutMs;
    while (this.sessions.length <= after) {
      if (Date.now() > deadline) throw new Error('no new node session');
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 200);
      });
    }
    return this.sessions[after]!;
  }

  private admit(ws: WebSocket) {
    const frames: Frame[] = [];
    const listeners: (() => void)[] = [];
    const session: PeerSession = {
      ws,
      nodeId: '',
      frames,
      lastHeard: Date.now(),
      next: async (type, match = () => true, timeoutMs = 60_000) => {
        const deadline = Date.now() + timeoutMs;
        for (;;) {
          const found = frames.find((f) => f.type === type && match(f as never));
          if (found) {
            frames.splice(frames.indexOf(found), 1);
            return found as never;
          }
          if (Date.now() > deadline || session.closedAt) throw new Error(`no ${type} frame`);
          await new Promise<void>((resolve) => {
            listeners.push(resolve);
            setTimeout(resolve, 50);
          });
        }
      },
    };
    ws.on('message', async (data) => {
      session.lastHeard = Date.now();
      const frame = parseFrame(data as Buffer);
      if (frame.type === 'ping') return ws.send(encodeFrame(createFrame('pong', { ts: frame.ts })));
      if (frame.type === 'hello') {
        session.nodeId = frame.nodeId;
        const now = Date.now();
        const challenge = createFrame('challenge', {
          nonce: 'ab'.repeat(16),
          issuedAt: new Date(now).toISOString(),
          expiresAt: new Date(now + 60_000).toISOString(),
          coordinatorId: 'test-coordinator',
        });
        (session as PeerSession & { challenge?: typeof challenge }).challenge = challenge;
        return ws.send(encodeFrame(challenge));
      }
      if (frame.type === 'auth') {
        const { challenge } = session as PeerSession & { challenge: FrameOf<'challenge'> };
        const signed = await verifyChallenge({
          challenge,
          nodeId: session.nodeId,
          signature: frame.signature,
        });
        if (!signed) return ws.close(4006);
        if (frame.owner && !(await verifyOwnerProof(session.nodeId, frame.owner))) return ws.close(4006);
        session.owner = frame.owner?.address;
        const welcome = createFrame('welcome', {
          version: 0,
          sessionId: `s-${this.sessions.length}`,
          heartbeatIntervalMs: this.heartbeatIntervalMs,
          ttlMs: this.ttlMs,
          maxFrameBytes: 1024 * 1024,
          tier: 'basic',
          scopes: [...SCOPES],
        });
        return ws.send(encodeFrame(welcome));
      }
      if (frame.type === 'manifest') {
        if (!(await verifyManifest(frame.manifest, frame.signature))) return ws.close(4007);
        this.sessions.push(session);
        for (const wake of this.waiters.splice(0)) wake();
        const models = frame.manifest.models.map((m) => m.id);
        return ws.send(encodeFrame(createFrame('manifest_ack', { scopes: frame.manifest.scopes, models })));
      }
      frames.push(frame);
      for (const wake of listeners.splice(0)) wake();
    });
    ws.on('close', () => {
      session.closedAt = Date.now();
      for (const wake of listeners.splice(0)) wake();
    });
  }

  /** When the session was seen offline: its close, or TTL after its last frame. */
  async offlineAt(session: PeerSession, timeoutMs = 10_000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (session.closedAt) return session.closedAt;
      if (Date.now() - session.lastHeard > this.ttlMs) return session.lastHeard + this.ttlMs;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error('the session never went offline');
  }

  close() {
    for (const client of this.wss.clients) client.terminate();
    return new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }
}
