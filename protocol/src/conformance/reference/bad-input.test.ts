import fc from 'fast-check';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { createFrame } from '../../create-frame.js';
import { PROTOCOL_ERRORS } from '../../errors.js';
import { signChallenge } from '../../identity/sign-challenge.js';
import { parseFrame } from '../../parse-frame.js';
import { type ReferenceCoordinator, startReferenceCoordinator } from './reference-coordinator.js';
import { startReferenceNode } from './reference-node.js';

/** Close codes a peer may use for bad input: the registry's, or 1009 from the WebSocket layer. */
const DOCUMENTED = new Set<number>([
  1009,
  ...Object.values(PROTOCOL_ERRORS).flatMap((e) => (e.closeCode === null ? [] : [e.closeCode])),
]);

/** Arbitrary garbage: random text, random JSON objects, and frames of every type with random fields. */
const garbage = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc.json({ maxDepth: 3 }),
  fc
    .record({
      v: fc.constantFrom(0, 1, '0'),
      type: fc.constantFrom(
        'hello',
        'auth',
        'manifest',
        'presence',
        'chunk',
        'result',
        'job',
        'welcome',
        'x',
      ),
      extra: fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 5 }),
    })
    .map(({ v, type, extra }) => JSON.stringify({ ...extra, v, type })),
);

type Outcome = { code: number; errors: string[] };

/** Opens a session, optionally authenticates, sends `data`, and reports how the peer reacted. */
async function poke(url: string, data: string, authenticate: boolean): Promise<Outcome | 'open'> {
  const ws = new WebSocket(url);
  const errors: string[] = [];
  const frames: string[] = [];
  ws.on('message', (raw) => frames.push(raw.toString()));
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  if (authenticate) {
    const node = privateKeyToAccount(generatePrivateKey());
    ws.send(
      JSON.stringify(
        createFrame('hello', {
          nodeId: node.address,
          role: 'cpu',
          versions: [0],
          software: { name: 't', version: '0' },
        }),
      ),
    );
    while (frames.length === 0) await new Promise((r) => setTimeout(r, 5));
    const challenge = parseFrame(frames.shift()!);
    if (challenge.type !== 'challenge') throw new Error('no challenge');
    ws.send(JSON.stringify(createFrame('auth', { signature: await signChallenge(challenge, node) })));
    while (frames.length === 0) await new Promise((r) => setTimeout(r, 5));
    frames.shift();
  }
  ws.send(data);
  const code = await Promise.race([closed, new Promise<'open'>((r) => setTimeout(() => r('open'), 300))]);
  for (const text of frames) {
    const frame = parseFrame(text);
    if (frame.type === 'error') errors.push(frame.code);
  }
  ws.terminate();
  return code === 'open' ? 'open' : { code, errors };
}

describe('reference coordinator: bad input', () => {
  let coordinator: ReferenceCoordinator;
  beforeAll(async () => {
    coordinator = await startReferenceCoordinator({ heartbeatIntervalMs: 5000, maxFrameBytes: 64 * 1024 });
  });
  afterAll(() => coordinator.close());

  test('behavior: anything before or after auth gets a documented close code or an error frame', async () => {
    await fc.assert(
      fc.asyncProperty(garbage, fc.boolean(), async (data, authenticate) => {
        const outcome = await poke(coordinator.url, data, authenticate);
        if (outcome === 'open') return true; // a valid frame for the phase: accepted
        expect(DOCUMENTED.has(outcome.code)).toBe(true);
        for (const code of outcome.errors) expect(Object.keys(PROTOCOL_ERRORS)).toContain(code);
        return true;
      }),
      { numRuns: 60 },
    );
    // The coordinator still works.
    expect(await poke(coordinator.url, '{"v":0,"type":"ping","ts":1}', true)).toBe('open');
  });
});

describe('reference node: bad input', () => {
  // Few samples: the node backs off (doubling) after each session that fails before ready.
  test('behavior: garbage from a coordinator gets a documented close code, and the node reconnects', async () => {
    const codes: number[] = [];
    const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    await new Promise((resolve) => wss.once('listening', resolve));
    const samples = fc.sample(garbage, 8);
    let next = 0;
    const done = new Promise<void>((resolve) => {
      wss.on('connection', (ws) => {
        ws.once('message', () => ws.send(samples[next++ % samples.length]!));
        ws.on('close', (code) => {
          codes.push(code);
          if (codes.length >= samples.length) resolve();
        });
      });
    });
    const { port } = wss.address() as { port: number };
    const node = startReferenceNode({ url: `ws://127.0.0.1:${port}`, reconnectDelayMs: 1 });
    await done;
    await node.stop();
    await new Promise((resolve) => wss.close(resolve));
    for (const code of codes) expect(DOCUMENTED.has(code)).toBe(true);
  });
});
