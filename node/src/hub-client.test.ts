import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { createFrame, encodeFrame, type FrameOf, type JobFrame } from '@gpumesh/protocol';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type WebSocket, WebSocketServer } from 'ws';
import { HubClient } from './hub-client.js';
import type { HubClientOptions } from './hub-client-options.js';
import { chatChunk } from './runtimes/openai-shapes.js';
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

/** A client with an empty manifest; `runJob` and the rest from `options`. */
function testClient(options: Pick<HubClientOptions, 'runJob'> & Partial<HubClientOptions>): HubClient {
  const account = privateKeyToAccount(generatePrivateKey());
  return new HubClient({
    url: peer.url,
    account,
    role: 'cpu',
    capacity: 1,
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
    ...options,
  });
}

/** Starts the client and returns its admitted session, recording the order of frame types. */
async function admitted(client: HubClient) {
  const before = peer.sessions.length;
  client.start();
  const session = await peer.nextSession(before);
  await session.next('presence');
  const order: { type: string; jobId?: string }[] = [];
  session.ws.on('message', (data) => order.push(JSON.parse(String(data))));
  return { session, order };
}

/** The next heartbeat `ping` the node sends (the peer answers pings without keeping them). */
const nextPing = (ws: WebSocket) =>
  new Promise<Record<string, unknown>>((resolve) => {
    const onMessage = (data: unknown) => {
      const frame = JSON.parse(String(data)) as Record<string, unknown>;
      if (frame.type !== 'ping') return;
      ws.off('message', onMessage);
      resolve(frame);
    };
    ws.on('message', onMessage);
  });

const streamJob = (jobId: string): JobFrame => ({ ...job(jobId), stream: true });
const meta = { id: 'chatcmpl-1', model: 'm', created: 1 };
const usage = (completion: number) => ({
  prompt_tokens: 1,
  completion_tokens: completion,
  total_tokens: 1 + completion,
});
const contentOf = (chunk: Record<string, unknown>) =>
  (chunk.choices as { delta: { content?: string } }[])[0]!.delta.content ?? '';

describe('HubClient', () => {
  test('behavior: a failed connection attempt counts as a session that did not reach ready: the delay doubles', async () => {
    const delays: number[] = [];
    const client = testClient({
      url: 'ws://127.0.0.1:1', // nothing listens: every TCP connect is refused
      random: () => 1,
      runJob: async () => {
        throw new Error('no jobs here');
      },
      log: {
        info: (message, details) => {
          if (message === 'reconnecting') delays.push((details as { inMs: number }).inMs);
        },
        warn: () => {},
      },
    });
    client.start();
    await expect.poll(() => delays.length, { timeout: 5000 }).toBeGreaterThanOrEqual(3);
    client.stop();
    // NODE_PROTOCOL.md §12: 20, 40, 80 ms (reconnectMinMs 20), as after sessions that failed before ready.
    expect(delays.slice(0, 3)).toEqual([20, 40, 80]);
  });

  test('behavior: busy at max concurrency, overloaded beyond it, online again after', async () => {
    const release: (() => void)[] = [];
    const client = testClient({
      capacity: 2,
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

  test('behavior: a node keeping a prefix cache says what it holds in every presence and ping (v0.5); one without says nothing', async () => {
    let held = [{ model: 'm', keys: [] as string[] }];
    const client = testClient({
      prefixCache: () => held,
      runJob: async () => {
        held = [{ model: 'm', keys: ['0123456789abcdef'] }];
        return { usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 }, choices: [] };
      },
    });
    const before = peer.sessions.length;
    client.start();
    const session = await peer.nextSession(before);
    expect(await session.next('presence')).toMatchObject({ prefixCache: [{ model: 'm', keys: [] }] });
    session.ws.send(encodeFrame(job('a')));
    await session.next('result', (r) => r.jobId === 'a');
    // The presence after the job already names the conversation it served.
    expect(await session.next('presence', (p) => p.load.inFlight === 0)).toMatchObject({
      prefixCache: [{ model: 'm', keys: ['0123456789abcdef'] }],
    });
    expect(await nextPing(session.ws)).toMatchObject({
      prefixCache: [{ model: 'm', keys: ['0123456789abcdef'] }],
    });
    await client.shutdown(1_000);

    const plain = testClient({ runJob: async () => ({ usage: usage(1), choices: [] }) });
    const next = peer.sessions.length;
    plain.start();
    const second = await peer.nextSession(next);
    expect(await second.next('presence')).not.toHaveProperty('prefixCache');
    expect(await nextPing(second.ws)).not.toHaveProperty('prefixCache');
    await plain.shutdown(1_000);
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
  test('behavior: the coordinator closing with 4007 (its side: the manifest) waits the longest delay; the node closing a session itself backs off as usual', async () => {
    // A raw peer: the first connection it closes itself with 4007, the next gets half a JSON object (the node closes it, 4000).
    const raw = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    await once(raw, 'listening');
    let connections = 0;
    raw.on('connection', (ws) => {
      connections++;
      ws.once('message', () => {
        if (connections === 1) ws.close(4007, 'manifest_signature_invalid');
        else ws.send('{"v":0,"type":"ping",');
      });
    });
    const delays: number[] = [];
    const client = testClient({
      url: `ws://127.0.0.1:${(raw.address() as AddressInfo).port}`,
      random: () => 1,
      runJob: () => Promise.reject(new Error('never admitted')),
      log: {
        info: (message, details) => {
          if (message === 'reconnecting') delays.push((details as { inMs: number }).inMs);
        },
        warn: () => {},
      },
    });
    client.start();
    await expect.poll(() => delays.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
    client.stop();
    // reconnectMaxMs is 100: the coordinator's 4007 waits it all; the node's own 4000 then 40 ms (second attempt).
    expect(delays.slice(0, 2)).toEqual([100, 40]);
    await new Promise<void>((resolve) => raw.close(() => resolve()));
  });

  test('error: a job before the handshake ends the session with out_of_order (4005)', async () => {
    // A raw peer that answers hello with a job.
    const raw = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    await once(raw, 'listening');
    const closes: number[] = [];
    const errors: FrameOf<'error'>[] = [];
    raw.on('connection', (ws) => {
      ws.once('message', () => ws.send(encodeFrame(job('early'))));
      ws.on('message', (data) => {
        const frame = JSON.parse(String(data));
        if (frame.type === 'error') errors.push(frame);
      });
      ws.on('close', (code) => closes.push(code));
    });
    let ran = 0;
    const client = testClient({
      url: `ws://127.0.0.1:${(raw.address() as AddressInfo).port}`,
      runJob: () => {
        ran++;
        return Promise.reject(new Error('never admitted'));
      },
    });
    client.start();
    await expect.poll(() => closes.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
    client.stop();
    await new Promise<void>((resolve) => raw.close(() => resolve()));
    expect(closes[0]).toBe(4005);
    expect(errors[0]).toMatchObject({ code: 'out_of_order', retryable: false });
    expect(errors[0]!.jobId).toBeUndefined();
    expect(ran).toBe(0);
  });

  test('behavior: a burst of tokens goes out as fewer chunk frames whose text and tokens add up', async () => {
    const words = Array.from({ length: 200 }, (_, i) => ` w${i}`);
    const client = testClient({
      runJob: async (_job, { onChunk }) => {
        onChunk(chatChunk(meta, { role: 'assistant', content: '' }), 0);
        for (const word of words) {
          onChunk(chatChunk(meta, { content: word }), 1);
          await new Promise((resolve) => setImmediate(resolve));
        }
        onChunk(chatChunk(meta, {}, 'stop'), 0);
        return { usage: usage(words.length), choices: [] };
      },
    });
    const { session, order } = await admitted(client);
    session.ws.send(encodeFrame(streamJob('burst')));
    await session.next('result', (r) => r.jobId === 'burst');
    const chunks = session.frames.filter(
      (f) => f.type === 'chunk' && f.jobId === 'burst',
    ) as FrameOf<'chunk'>[];
    expect(chunks.map((c) => c.seq)).toEqual(chunks.map((_, i) => i));
    expect(chunks.length).toBeLessThan(words.length / 2);
    expect(chunks.map((c) => contentOf(c.chunk)).join('')).toBe(words.join(''));
    expect(chunks.reduce((sum, c) => sum + c.tokens!, 0)).toBe(words.length);
    // The role with the first token, which came in the same turn (one frame, sent at once), … ,
    // the finish reason last.
    expect(chunks[0]!.chunk.choices).toMatchObject([{ delta: { role: 'assistant', content: ' w0' } }]);
    expect(chunks[0]).toMatchObject({ seq: 0, tokens: 1 });
    expect(chunks.at(-1)!.chunk.choices).toMatchObject([{ delta: {}, finish_reason: 'stop' }]);
    const ofJob = order.filter((f) => f.jobId === 'burst').map((f) => f.type);
    expect(ofJob).toEqual([...chunks.map(() => 'chunk'), 'result']);
    await client.shutdown(1_000);
  });

  test('behavior: the first token goes out at once; what is held goes out before the result', async () => {
    let finish!: () => void;
    const client = testClient({
      chunkFlushMs: 60_000,
      runJob: async (_job, { onChunk }) => {
        onChunk(chatChunk(meta, { content: 'first' }), 1);
        await new Promise((resolve) => setImmediate(resolve)); // the first frame leaves
        onChunk(chatChunk(meta, { content: ' second' }), 1);
        onChunk(chatChunk(meta, { content: ' third' }), 2);
        await new Promise<void>((resolve) => {
          finish = resolve;
        });
        return { usage: usage(4), choices: [] };
      },
    });
    const { session, order } = await admitted(client);
    session.ws.send(encodeFrame(streamJob('ttft')));
    const first = await session.next('chunk', (c) => c.jobId === 'ttft', 5_000);
    expect(first).toMatchObject({ seq: 0, tokens: 1 });
    expect(contentOf(first.chunk)).toBe('first');
    // The job is still running and the flush interval is a minute: the rest is held …
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(order.filter((f) => f.jobId === 'ttft')).toHaveLength(1);
    // … until the job ends: then one chunk with both pieces, then the result.
    finish();
    await session.next('result', (r) => r.jobId === 'ttft', 5_000);
    const rest = await session.next('chunk', (c) => c.jobId === 'ttft', 5_000);
    expect(rest).toMatchObject({ seq: 1, tokens: 3 });
    expect(contentOf(rest.chunk)).toBe(' second third');
    expect(order.filter((f) => f.jobId === 'ttft').map((f) => f.type)).toEqual(['chunk', 'chunk', 'result']);
    await client.shutdown(1_000);
  });

  test('behavior: cancelled with text held, the job sends job_cancelled and no further chunk', async () => {
    const client = testClient({
      chunkFlushMs: 60_000,
      runJob: async (_job, { onChunk, signal }) => {
        onChunk(chatChunk(meta, { content: 'first' }), 1);
        onChunk(chatChunk(meta, { content: ' held' }), 1);
        await new Promise((resolve) => signal.addEventListener('abort', resolve));
        throw new Error('aborted');
      },
    });
    const { session, order } = await admitted(client);
    session.ws.send(encodeFrame(streamJob('cut')));
    await session.next('chunk', (c) => c.jobId === 'cut', 5_000);
    session.ws.send(encodeFrame(createFrame('cancel', { jobId: 'cut', reason: 'test' })));
    expect(await session.next('error', (e) => e.jobId === 'cut', 5_000)).toMatchObject({
      code: 'job_cancelled',
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(order.filter((f) => f.jobId === 'cut').map((f) => f.type)).toEqual(['chunk', 'error']);
    await client.shutdown(1_000);
  });

  test('behavior: its own shutdown deadline passed, the node cancels the running job (job_cancelled), then offline, bye, 1000', async () => {
    const client = testClient({
      runJob: async (_job, { signal }) => {
        await new Promise((resolve) => signal.addEventListener('abort', resolve));
        throw new Error('aborted');
      },
    });
    const { session, order } = await admitted(client);
    session.ws.send(encodeFrame(job('long')));
    await session.next('presence', (p) => p.load.inFlight === 1, 5_000);
    const closed = new Promise<number>((resolve) => session.ws.once('close', (code) => resolve(code)));
    const started = performance.now();
    await client.shutdown(200);
    expect(await closed).toBe(1000);
    // Not before its deadline (NODE_PROTOCOL.md §8 "Graceful shutdown").
    expect(performance.now() - started).toBeGreaterThanOrEqual(190);
    const after = order.map((f) =>
      f.type === 'presence' ? `presence ${(f as unknown as FrameOf<'presence'>).status}` : f.type,
    );
    expect(order.find((f) => f.jobId === 'long' && f.type === 'error')).toMatchObject({
      code: 'job_cancelled',
    });
    const cancelled = after.indexOf('error');
    expect(after.slice(0, cancelled)).toContain('presence draining');
    expect(after.slice(cancelled)).toEqual(expect.arrayContaining(['presence offline', 'bye']));
    expect(after.indexOf('presence offline')).toBeGreaterThan(cancelled);
    expect(after.indexOf('bye')).toBeGreaterThan(after.indexOf('presence offline'));
  });

  test('behavior: chunkFlushMs 0 sends the chunks of each turn at once, in one frame, counting tokens the runtime left out', async () => {
    const client = testClient({
      chunkFlushMs: 0,
      runJob: async (_job, { onChunk }) => {
        for (const word of ['a', 'b', 'c']) {
          onChunk(chatChunk(meta, { content: word }));
          await new Promise((resolve) => setImmediate(resolve));
        }
        // Several chunks in one turn (a relayed server's read): one frame, the text joined.
        for (const word of ['d', 'e']) onChunk(chatChunk(meta, { content: word }));
        return { usage: usage(5), choices: [] };
      },
    });
    const { session } = await admitted(client);
    session.ws.send(encodeFrame(streamJob('plain')));
    await session.next('result', (r) => r.jobId === 'plain');
    const chunks = session.frames.filter(
      (f) => f.type === 'chunk' && f.jobId === 'plain',
    ) as FrameOf<'chunk'>[];
    expect(chunks.map((c) => [contentOf(c.chunk), c.tokens])).toEqual([
      ['a', 1],
      ['b', 1],
      ['c', 1],
      ['de', 2],
    ]);
    await client.shutdown(1_000);
  });
});
