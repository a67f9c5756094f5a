import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
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
} from '@gpumesh/protocol';
import si from 'systeminformation';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type WebSocket, WebSocketServer } from 'ws';
import { writeTinyModel } from './models/write-tiny-model.js';

const BIN = join(import.meta.dirname, '..', 'bin', 'gpumesh-node.js');
const HEARTBEAT_MS = 100;
const TTL_MS = 2 * HEARTBEAT_MS;
const NO_EOS = { '2': -100 };
const dir = await mkdtemp(join(tmpdir(), 'gpumesh-node-process-'));

/** One admitted node session as the coordinator side sees it. */
type Session = {
  ws: WebSocket;
  nodeId: string;
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
class CoordinatorPeer {
  readonly wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  readonly sessions: Session[] = [];
  private waiters: (() => void)[] = [];

  constructor() {
    this.wss.on('connection', (ws) => this.admit(ws));
  }

  get url() {
    return `ws://127.0.0.1:${(this.wss.address() as AddressInfo).port}/node`;
  }

  async nextSession(after: number, timeoutMs = 60_000): Promise<Session> {
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
    const session: Session = {
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
        (session as Session & { challenge?: typeof challenge }).challenge = challenge;
        return ws.send(encodeFrame(challenge));
      }
      if (frame.type === 'auth') {
        const { challenge } = session as Session & { challenge: FrameOf<'challenge'> };
        expect(await verifyChallenge({ challenge, nodeId: session.nodeId, signature: frame.signature })).toBe(
          true,
        );
        const welcome = createFrame('welcome', {
          version: 0,
          sessionId: `s-${this.sessions.length}`,
          heartbeatIntervalMs: HEARTBEAT_MS,
          ttlMs: TTL_MS,
          maxFrameBytes: 1024 * 1024,
          tier: 'basic',
          scopes: [...SCOPES],
        });
        return ws.send(encodeFrame(welcome));
      }
      if (frame.type === 'manifest') {
        expect(await verifyManifest(frame.manifest, frame.signature)).toBe(true);
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
  async offlineAt(session: Session, timeoutMs = 10_000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (session.closedAt) return session.closedAt;
      if (Date.now() - session.lastHeard > TTL_MS) return session.lastHeard + TTL_MS;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error('the session never went offline');
  }

  close() {
    for (const client of this.wss.clients) client.terminate();
    return new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }
}

let peer: CoordinatorPeer;
const children: ChildProcess[] = [];

function startNode(): ChildProcess {
  const child = spawn(
    process.execPath,
    [
      BIN,
      'start',
      '--coordinator',
      peer.url,
      '--state-dir',
      join(dir, 'state'),
      '--models-dir',
      join(dir, 'models'),
      '--health-port',
      '0',
      '--gpu',
      'cpu',
      '--max-concurrency',
      '1',
      '--reconnect-min-ms',
      '50',
      '--reconnect-max-ms',
      '500',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, GPUMESH_COORDINATOR: '' } },
  );
  child.stderr?.resume();
  children.push(child);
  return child;
}

function job(model: string, maxTokens: number) {
  return createFrame('job', {
    jobId: `job-${Math.random().toString(36).slice(2)}`,
    kind: 'completion',
    model,
    request: { model, prompt: 'Once', max_tokens: maxTokens, logit_bias: NO_EOS },
    stream: true,
    timeoutMs: 120_000,
  });
}

beforeAll(async () => {
  await writeTinyModel({ path: join(dir, 'models', 'tiny.gguf'), seed: 3 });
  peer = new CoordinatorPeer();
  await once(peer.wss, 'listening');
});
afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  await peer.close();
  await rm(dir, { recursive: true, force: true });
});

describe('gpumesh-node process', () => {
  test('default: detect --json lists this machine as systeminformation reports it', {
    timeout: 60_000,
  }, async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [BIN, 'detect', '--json']);
    const hardware = JSON.parse(stdout);
    const [cpu, mem, graphics] = await Promise.all([si.cpu(), si.mem(), si.graphics()]);
    expect(hardware.cpu).toMatchObject({
      model: `${cpu.manufacturer} ${cpu.brand}`,
      cores: cpu.physicalCores,
      threads: cpu.cores,
    });
    expect(hardware.ramBytes).toBe(mem.total);
    expect(hardware.gpus).toHaveLength(graphics.controllers.length);
  });

  test('behavior: SIGKILL is seen offline within the TTL; restarted, the node reconnects', {
    timeout: 120_000,
  }, async () => {
    const first = startNode();
    const session = await peer.nextSession(0);
    await session.next('presence', (p) => p.status === 'online');
    const killedAt = Date.now();
    first.kill('SIGKILL');
    expect((await peer.offlineAt(session)) - killedAt).toBeLessThanOrEqual(TTL_MS);

    startNode();
    const again = await peer.nextSession(1);
    expect(again.nodeId).toBe(session.nodeId);
    await again.next('presence', (p) => p.status === 'online');

    // The coordinator drops the socket: the node comes back by itself.
    again.ws.terminate();
    const third = await peer.nextSession(2);
    expect(third.nodeId).toBe(session.nodeId);
  });

  test('behavior: SIGTERM finishes the in-flight job, takes no new one, goes offline, exits 143', {
    timeout: 120_000,
  }, async () => {
    const node = children.at(-1)!;
    const session = peer.sessions.at(-1)!;
    await session.next('presence', (p) => p.status === 'online');
    const long = job('tiny', 1500);
    session.ws.send(encodeFrame(long));
    await session.next('chunk', (c) => c.jobId === long.jobId);
    const exited = once(node, 'exit');
    node.kill('SIGTERM');
    await session.next('presence', (p) => p.status === 'draining');
    const late = job('tiny', 4);
    session.ws.send(encodeFrame(late));
    const refused = await session.next('error', (e) => e.jobId === late.jobId);
    expect(refused.code).toBe('draining');
    const result = await session.next('result', (r) => r.jobId === long.jobId);
    expect(result.response.usage.completion_tokens).toBe(1500);
    await session.next('presence', (p) => p.status === 'offline');
    await session.next('bye');
    const [code] = await exited;
    expect(code).toBe(143);
    expect(session.closedAt).toBeDefined();
  });
});
