import { type ChildProcess, execFile } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createFrame, encodeFrame } from '@gpumesh/protocol';
import si from 'systeminformation';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { writeTinyModel } from './models/write-tiny-model.js';
import { CoordinatorPeer } from './testing/coordinator-peer.js';
import { spawnNodeDaemon } from './testing/spawn-node-daemon.js';

const BIN = join(import.meta.dirname, '..', 'bin', 'gpumesh-node.js');
const NO_EOS = { '2': -100 };
const dir = await mkdtemp(join(tmpdir(), 'gpumesh-node-process-'));

let peer: CoordinatorPeer;
const children: ChildProcess[] = [];

function startNode(): ChildProcess {
  const { process: child } = spawnNodeDaemon({
    coordinator: peer.url,
    dir,
    args: ['--reconnect-min-ms', '50', '--reconnect-max-ms', '500'],
  });
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
    expect((await peer.offlineAt(session)) - killedAt).toBeLessThanOrEqual(peer.ttlMs);

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
