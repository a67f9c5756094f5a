import type { AddressInfo } from 'node:net';
import { type FixedReplyNode, startFixedReplyNode, usdOffer } from '@gpumesh/node/testing';
import { createFrame, encodeFrame, parseFrame, signChallenge } from '@gpumesh/protocol';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterEach, describe, expect, test } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { Router } from '../router/router.js';
import { until } from '../testing/until.js';
import { Hub } from './hub.js';

const USD = 1_000_000_000n;
const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function startHub(options: Partial<ConstructorParameters<typeof Hub>[0]> = {}) {
  const hub = new Hub({ nativeUsdPriceNano: USD, heartbeatIntervalMs: 1000, ...options });
  const wss = new WebSocketServer({ port: 0 });
  wss.on('connection', (socket) => hub.accept(socket));
  await new Promise((r) => wss.once('listening', r));
  hub.start();
  cleanup.push(
    () => new Promise((r) => wss.close(r)),
    () => hub.close(),
  );
  return { hub, url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}` };
}

async function node(
  url: string,
  options: Partial<Parameters<typeof startFixedReplyNode>[0]> = {},
): Promise<FixedReplyNode> {
  const n = startFixedReplyNode({ url, models: [usdOffer('m', USD, 2n * USD)], ...options });
  cleanup.push(() => n.kill());
  await n.ready;
  return n;
}

describe('Hub', () => {
  test('default: a node that completes the handshake becomes routable and serves a job', async () => {
    const { hub, url } = await startHub();
    const n = await node(url);
    await until(() => hub.index.pick({ modelId: 'm' }).ok);
    const pick = hub.index.pick({ modelId: 'm' });
    if (!pick.ok) throw new Error('unreachable');
    expect(pick.candidates[0]!.node.nodeId).toBe(n.nodeId);
    const chunks: unknown[] = [];
    const result = await new Promise((resolve, reject) =>
      hub.dispatch(
        pick.candidates[0]!,
        {
          kind: 'chat',
          model: 'm',
          request: { messages: [{ role: 'user', content: 'hi' }] },
          stream: true,
          timeoutMs: 5000,
        },
        { onChunk: (c) => chunks.push(c), onResult: resolve, onError: reject },
      ),
    );
    expect(chunks).toHaveLength(6);
    expect(result).toMatchObject({ usage: { prompt_tokens: 10, completion_tokens: 6 } });
  });

  test('behavior: a reconnecting node’s owner proof is verified once; a new manifest is verified', async () => {
    const { hub, url } = await startHub();
    const keys = { privateKey: generatePrivateKey(), ownerPrivateKey: generatePrivateKey() };
    const first = await node(url, keys);
    expect(hub.verified.size).toBe(2); // its manifest's signature and its owner proof
    first.kill();
    await until(() => hub.size === 0);
    await node(url, keys); // the same proof; the fixed-reply node signs a manifest with a new issuedAt
    await until(() => hub.size === 1);
    expect(hub.verified.size).toBe(3);
  });

  test('behavior: the router holds one slot of the node while its job runs, whatever ends it', async () => {
    const { hub, url } = await startHub();
    await node(url, { chunkDelayMs: 20 });
    await until(() => hub.index.pick({ modelId: 'm' }).ok);
    const router = new Router({ index: hub.index, local: hub });
    const pick = hub.index.pick({ modelId: 'm' });
    if (!pick.ok) throw new Error('unreachable');
    const entry = pick.candidates[0]!;
    const spec = {
      kind: 'chat' as const,
      model: 'm',
      request: { messages: [] },
      stream: true,
      timeoutMs: 5000,
    };
    let during = -1;
    await new Promise((resolve, reject) =>
      router.dispatch(router.claim(entry)!, spec, {
        onChunk: () => {
          during = entry.inflight;
        },
        onResult: resolve,
        onError: reject,
      }),
    );
    expect([during, entry.inflight]).toEqual([1, 0]);
    // Cancelled by the caller: the slot comes back when the job ends.
    const cancelled = await new Promise((resolve, reject) => {
      const handle = router.dispatch(router.claim(entry)!, spec, {
        onChunk: () => handle.cancel('client gone'),
        onResult: reject,
        onError: resolve,
      });
    });
    expect(cancelled).toMatchObject({ code: 'job_cancelled' });
    expect(entry.inflight).toBe(0);
    // A job the node's frame refuses (a request that is not an object) throws and holds nothing.
    expect(() =>
      router.dispatch(
        router.claim(entry)!,
        { ...spec, request: [] as unknown as Record<string, unknown> },
        {
          onResult: () => {},
          onError: () => {},
        },
      ),
    ).toThrow();
    expect(entry.inflight).toBe(0);
  });

  test('behavior: claims stop at the node’s slots; a slot given back can be claimed again', async () => {
    const { hub, url } = await startHub();
    const n = startFixedReplyNode({ url, models: [usdOffer('m', USD, 2n * USD, { maxConcurrency: 2 })] });
    cleanup.push(() => n.kill());
    await n.ready;
    await until(() => hub.index.pick({ modelId: 'm' }).ok);
    const router = new Router({ index: hub.index, local: hub });
    const pick = hub.index.pick({ modelId: 'm' });
    if (!pick.ok) throw new Error('unreachable');
    const entry = pick.candidates[0]!;
    // Requests that picked the node at once get its slots (the offer's, capped by its tier), no more.
    const slots = Array.from({ length: entry.offer.maxConcurrency }, () => router.claim(entry));
    expect(slots.every(Boolean)).toBe(true);
    expect(router.claim(entry)).toBeUndefined();
    expect(hub.index.pick({ modelId: 'm' }).ok).toBe(false);
    const last = slots.pop()!;
    last.release();
    last.release(); // idempotent: one slot back, not two
    expect(entry.inflight).toBe(slots.length);
    const again = router.claim(entry);
    expect(again).toBeDefined();
    for (const slot of [...slots, again]) slot!.release();
    expect(entry.inflight).toBe(0);
  });

  test('behavior: a silent node expires at the TTL and its model disappears', async () => {
    const { hub, url } = await startHub({ heartbeatIntervalMs: 100 });
    const n = await node(url);
    await until(() => hub.index.hasModel('m'));
    n.mute();
    const t0 = Date.now();
    await until(() => !hub.index.hasModel('m'));
    // TTL = 2 × 100 ms heartbeat; the sweep runs every 50 ms.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(150);
    expect(hub.size).toBe(0);
  });

  test('behavior: a node dying mid-job fails the job as node_lost', async () => {
    const { hub, url } = await startHub();
    await node(url, { dieAfterChunks: 2, chunkDelayMs: 5 });
    await until(() => hub.index.pick({ modelId: 'm' }).ok);
    const pick = hub.index.pick({ modelId: 'm' });
    if (!pick.ok) throw new Error('unreachable');
    let chunks = 0;
    const error = await new Promise((resolve, reject) =>
      hub.dispatch(
        pick.candidates[0]!,
        { kind: 'chat', model: 'm', request: { messages: [] }, stream: true, timeoutMs: 5000 },
        { onChunk: () => chunks++, onResult: reject, onError: resolve },
      ),
    );
    expect(chunks).toBe(2);
    expect(error).toMatchObject({ code: 'node_lost' });
    expect(hub.index.hasModel('m')).toBe(false);
  });

  test('behavior: a job error reaches the caller with its registry code beside the code sent', async () => {
    const { hub, url } = await startHub();
    await node(url, { failBeforeFirstToken: true });
    await until(() => hub.index.pick({ modelId: 'm' }).ok);
    const pick = hub.index.pick({ modelId: 'm' });
    if (!pick.ok) throw new Error('unreachable');
    const error = await new Promise((resolve, reject) =>
      hub.dispatch(
        pick.candidates[0]!,
        { kind: 'chat', model: 'm', request: { messages: [] }, stream: false, timeoutMs: 5000 },
        { onResult: reject, onError: resolve },
      ),
    );
    expect(error).toEqual({
      code: 'runtime_error',
      protocolCode: 'runtime_error',
      message: 'failing on purpose',
      retryable: true,
    });
  });

  test('behavior: a job the node does not end in time fails as job_timeout, a registry code', async () => {
    const { hub, url } = await startHub();
    await node(url, { chunkDelayMs: 1000 });
    await until(() => hub.index.pick({ modelId: 'm' }).ok);
    const pick = hub.index.pick({ modelId: 'm' });
    if (!pick.ok) throw new Error('unreachable');
    const error = await new Promise((resolve, reject) =>
      hub.dispatch(
        pick.candidates[0]!,
        { kind: 'chat', model: 'm', request: { messages: [] }, stream: true, timeoutMs: 100 },
        { onResult: reject, onError: resolve },
      ),
    );
    expect(error).toMatchObject({ code: 'job_timeout', protocolCode: 'job_timeout', retryable: true });
  });

  test('behavior: graceful stop and draining take the node out of routing', async () => {
    const { hub, url } = await startHub();
    const a = await node(url);
    const b = await node(url, { models: [usdOffer('m', 3n * USD, 3n * USD)] });
    await until(() => hub.index.pick({ modelId: 'm', limit: 5 }).ok && hub.size === 2);
    await until(() => {
      const p = hub.index.pick({ modelId: 'm', limit: 5 });
      return p.ok && p.candidates.length === 2;
    });
    hub.drain(a.nodeId, 1000);
    const p = hub.index.pick({ modelId: 'm', limit: 5 });
    expect(p.ok && p.candidates.map((c) => c.node.nodeId)).toEqual([b.nodeId]);
    await b.stop();
    await until(() => !hub.index.pick({ modelId: 'm' }).ok);
  });

  test('error: a wrong challenge signature closes with auth_failed (4006)', async () => {
    const { hub, url } = await startHub();
    const nodeKey = privateKeyToAccount(generatePrivateKey());
    const impostor = privateKeyToAccount(generatePrivateKey());
    const ws = new WebSocket(url);
    const frames: string[] = [];
    const closed = new Promise<number>((r) => ws.on('close', (code) => r(code)));
    ws.on('message', async (data) => {
      const frame = parseFrame(data as Buffer);
      frames.push(frame.type);
      if (frame.type === 'challenge') {
        const signature = await signChallenge(frame, {
          address: nodeKey.address,
          signMessage: impostor.signMessage,
        });
        ws.send(encodeFrame(createFrame('auth', { signature })));
      }
    });
    ws.on('open', () =>
      ws.send(
        encodeFrame(
          createFrame('hello', {
            nodeId: nodeKey.address,
            role: 'cpu',
            versions: [0],
            software: { name: 't', version: '0' },
          }),
        ),
      ),
    );
    expect(await closed).toBe(4006);
    expect(frames).toEqual(['challenge', 'error']);
    expect(hub.size).toBe(0);
  });

  test('error: malformed, out-of-order and oversized frames get their close codes', async () => {
    const { url } = await startHub({ maxFrameBytes: 64 * 1024 });
    const closeWith = async (payload: string) => {
      const ws = new WebSocket(url);
      await new Promise((r) => ws.on('open', r));
      ws.send(payload);
      return new Promise<number>((r) => ws.on('close', (code) => r(code)));
    };
    expect(await closeWith('not json')).toBe(4000);
    expect(await closeWith(JSON.stringify({ v: 0, type: 'nope' }))).toBe(4001);
    expect(await closeWith(JSON.stringify({ v: 0, type: 'hello' }))).toBe(4002);
    expect(await closeWith(JSON.stringify({ v: 0, type: 'ping', ts: 1 }))).toBe(4005);
    expect(await closeWith(JSON.stringify({ v: 0, type: 'ping', ts: 1, pad: 'x'.repeat(70_000) }))).toBe(
      4003,
    );
  });
});
