import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { createFrame, encodeFrame, type JobFrame } from '@gpumesh/protocol';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { WebSocketServer } from 'ws';
import { HubClient } from './hub-client.js';
import { CoordinatorPeer } from './testing/coordinator-peer.js';

let peer: CoordinatorPeer;
beforeAll(async () => {
  peer = new CoordinatorPeer();
  await once(peer.wss, 'listening');
});
afterAll(() => peer.close());

const job = (jobId: string): JobFrame =>
  createFrame('job', {
    jobId,
    kind: 'chat',
    model: 'm',
    request: { messages: [{ role: 'user', content: 'hi' }] },
    stream: false,
    timeoutMs: 10_000,
  });

describe('HubClient', () => {
  test('behavior: busy at max concurrency, overloaded beyond it, online again after', async () => {
    const release: (() => void)[] = [];
    const account = privateKeyToAccount(generatePrivateKey());
    const client = new HubClient({
      url: peer.url,
      account,
      role: 'cpu',
      capacity: 2,
      reconnectMinMs: 20,
      reconnectMaxMs: 100,
      manifest: () => ({
        nodeId: account.address,
        role: 'cpu',
        hardware: { gpus: [], cpu: { model: 'x', cores: 1, threads: 1, arch: 'x64' }, ramBytes: 1 },
        runtimes: [{ name: 'test', version: '0' }],
        models: [],
        scopes: [],
        software: { name: 'gpumesh-node', version: '0' },
        protocolVersion: 0,
        issuedAt: new Date().toISOString(),
      }),
      runJob: () =>
        new Promise((resolve) => {
          release.push(() =>
            resolve({ usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }, choices: [] }),
          );
        }),
    });
    const before = peer.sessions.length;
    client.start();
    const session = await peer.nextSession(before);
    expect(await session.next('presence')).toMatchObject({
      status: 'online',
      load: { inFlight: 0, capacity: 2 },
    });
    session.ws.send(encodeFrame(job('a')));
    expect(await session.next('presence')).toMatchObject({ status: 'online', load: { inFlight: 1 } });
    session.ws.send(encodeFrame(job('b')));
    expect(await session.next('presence')).toMatchObject({
      status: 'busy',
      load: { inFlight: 2, capacity: 2 },
    });
    session.ws.send(encodeFrame(job('c')));
    expect(await session.next('error', (e) => e.jobId === 'c')).toMatchObject({
      code: 'overloaded',
      retryable: true,
    });
    session.ws.send(encodeFrame(job('a')));
    expect(await session.next('error', (e) => e.jobId === 'a')).toMatchObject({ code: 'duplicate_job' });
    release.shift()!();
    await session.next('result', (r) => r.jobId === 'a');
    expect(await session.next('presence')).toMatchObject({ status: 'online', load: { inFlight: 1 } });
    release.shift()!();
    expect(await session.next('presence', (p) => p.load.inFlight === 0)).toMatchObject({ status: 'online' });
    expect(client.connected).toBe(true);
    await client.shutdown(1_000);
    expect(client.state).toBe('stopped');
  });

  test('error: a malformed frame ends the session with 4000; the client reconnects by itself', async () => {
    // A raw peer that answers hello with half a JSON object.
    const raw = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    await once(raw, 'listening');
    const closes: number[] = [];
    raw.on('connection', (ws) => {
      ws.once('message', () => ws.send('{"v":0,"type":"ping",'));
      ws.on('close', (code) => closes.push(code));
    });
    const client = new HubClient({
      url: `ws://127.0.0.1:${(raw.address() as AddressInfo).port}`,
      account: privateKeyToAccount(generatePrivateKey()),
      role: 'cpu',
      capacity: 1,
      reconnectMinMs: 20,
      reconnectMaxMs: 100,
      manifest: () => {
        throw new Error('never admitted');
      },
      runJob: () => Promise.reject(new Error('never admitted')),
    });
    client.start();
    await expect.poll(() => closes.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
    expect(closes.slice(0, 2)).toEqual([4000, 4000]);
    client.stop();
    await new Promise<void>((resolve) => raw.close(() => resolve()));
  });
});
