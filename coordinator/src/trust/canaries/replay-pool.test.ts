/**
 * Replayed traffic (replay-pool.ts): which client jobs a canary may replay, to whom, how often,
 * how long; then a real app on SQLite with two of the protocol's reference nodes, where a canary
 * to the node that did not serve a client's job is that job, exactly as the node got it.
 */
import type { AddressInfo } from 'node:net';
import { REFERENCE_CHAT_MODEL, startReferenceNode } from '@gpumesh/protocol/conformance';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { HUB_PATH } from '../../hub/hub-plugin.js';
import type { JobSpec } from '../../router/jobs.js';
import { createTestApp, fundedApiKey, type TestApp, testBackends, until } from '../../testing/index.js';
import { type Replayable, ReplayPool } from './replay-pool.js';

const job = (content: string): Replayable => ({
  kind: 'chat',
  stream: false,
  request: { model: 'm', messages: [{ role: 'user', content }], max_tokens: 8 },
});

describe('ReplayPool', () => {
  test('behavior: a job goes back neither to its node nor to a node of the same owner', () => {
    const pool = new ReplayPool();
    pool.note('m', job('a'), { nodeId: 'n1', owner: '0xAbC' }, 0);
    expect(pool.take('m', { nodeId: 'n1' }, 1)).toBeUndefined();
    expect(pool.take('m', { nodeId: 'n2', owner: '0xabc' }, 1)).toBeUndefined();
    expect(pool.take('m', { nodeId: 'n3', owner: '0xdef' }, 1)).toEqual(job('a'));
    expect(pool.take('other-model', { nodeId: 'n3' }, 1)).toBeUndefined();
  });

  test('behavior: nor to a node the request failed over or was hedged to after it was noted', () => {
    const pool = new ReplayPool();
    const tried = new Set(['n1']);
    pool.note('m', job('a'), { nodeId: 'n1', tried }, 0);
    tried.add('n2');
    expect(pool.take('m', { nodeId: 'n2' }, 1)).toBeUndefined();
    expect(pool.take('m', { nodeId: 'n3' }, 1)).toEqual(job('a'));
  });

  test('behavior: each job to at most maxReplays nodes, each node once', () => {
    const pool = new ReplayPool({ maxReplays: 2 });
    pool.note('m', job('a'), { nodeId: 'n1' }, 0);
    expect(pool.take('m', { nodeId: 'n2' }, 1)).toEqual(job('a'));
    expect(pool.take('m', { nodeId: 'n2' }, 1)).toBeUndefined();
    expect(pool.take('m', { nodeId: 'n3' }, 1)).toEqual(job('a'));
    expect(pool.take('m', { nodeId: 'n4' }, 1)).toBeUndefined();
    expect(pool.size('m')).toBe(0);
  });

  test('behavior: only recent jobs, only the newest perModel, none too long; the newest first', () => {
    const pool = new ReplayPool({ maxAgeMs: 1_000, perModel: 3, maxChars: 200 });
    pool.note('m', job('old'), { nodeId: 'n1' }, 0);
    expect(pool.take('m', { nodeId: 'n2' }, 1_001)).toBeUndefined();
    expect(pool.size('m')).toBe(0);
    for (const text of ['a', 'b', 'c', 'd']) pool.note('m', job(text), { nodeId: 'n1' }, 2_000);
    expect(pool.size('m')).toBe(3);
    pool.note('m', job('x'.repeat(300)), { nodeId: 'n1' }, 2_000);
    const taken: string[] = [];
    for (let i = 0; i < 10; i++) {
      const got = pool.take('m', { nodeId: `t${i}` }, 2_001);
      if (got) taken.push((got.request.messages as { content: string }[])[0]!.content);
    }
    // The long one is passed over; b went when the pool was full; each of c and d to two nodes.
    expect(taken).toEqual(['d', 'd', 'c', 'c']);
  });
});

describe('canaries replay shareable client jobs (a real app, two reference nodes)', () => {
  let t: TestApp;
  const nodes: ReturnType<typeof startReferenceNode>[] = [];
  let key: string;

  beforeAll(async () => {
    const sqlite = testBackends().find((b) => b.name === 'sqlite')!;
    // The canary timer off: the only canaries are the test's own.
    t = await createTestApp(sqlite, {
      label: 'replay',
      overrides: { router: { maxTokensCap: 8 }, trust: { canaryIntervalMs: 0 } },
    });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    key = await fundedApiKey(t.app, t.db, 'replay', 1_000_000_000_000n);
    const port = (t.app.server.address() as AddressInfo).port;
    for (let i = 0; i < 2; i++)
      nodes.push(
        startReferenceNode({ url: `ws://127.0.0.1:${port}${HUB_PATH}`, tokenDelayMs: 0, capacity: 4 }),
      );
    await until(() => entries().length === 2);
  }, 60_000);
  afterAll(async () => {
    await Promise.all(nodes.map((n) => n.stop()));
    await t?.close();
  });

  const entries = () =>
    [...t.app.hub.index.nodes()].flatMap((n) =>
      [...n.entries.values()].filter((e) => e.offer.modelId === REFERENCE_CHAT_MODEL),
    );
  /** What `runOnce` sends the node of `nodeId`: the canary's request. */
  const canaryTo = async (nodeId: string): Promise<Record<string, unknown>> => {
    // A node slow to answer its heartbeat on a loaded machine may be reconnecting: wait for it.
    await until(() => entries().some((e) => e.node.nodeId === nodeId));
    const dispatch = vi.spyOn(t.app.router, 'dispatch');
    // What the canary carries is under test, not its verdict: the reference node sends no token
    // ids, and two failed checks would suspend it (judge.ts) before the test is done with it.
    const check = vi
      .spyOn(t.app.canaries, 'check')
      .mockResolvedValue({ status: 'skipped', reason: 'the verdict is not under test' });
    try {
      const entry = entries().find((e) => e.node.nodeId === nodeId)!;
      await t.app.canaries.runOnce(entry);
      expect(check).toHaveBeenCalledTimes(1);
      const spec = dispatch.mock.calls[0]![1] as JobSpec;
      return spec.request;
    } finally {
      dispatch.mockRestore();
      check.mockRestore();
    }
  };
  /** A client's chat; the node that served it. */
  const chat = async (content: string, provider?: Record<string, unknown>): Promise<string> => {
    const dispatch = vi.spyOn(t.app.router, 'dispatch');
    try {
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/chat/completions',
        headers: { authorization: `Bearer ${key}` },
        payload: {
          model: REFERENCE_CHAT_MODEL,
          messages: [{ role: 'user', content }],
          ...(provider ? { provider } : {}),
        },
      });
      expect(res.statusCode).toBe(200);
      return (dispatch.mock.calls[0]![0] as { entry: { node: { nodeId: string } } }).entry.node.nodeId;
    } finally {
      dispatch.mockRestore();
    }
  };

  test('behavior: the other node gets the client job as its canary; the serving node and a denied job get made ones', async () => {
    const denied = await chat('keep this to yourselves', { data_collection: 'deny' });
    const other = entries().find((e) => e.node.nodeId !== denied)!.node.nodeId;
    // Nothing shareable yet: the canary is made.
    expect(JSON.stringify(await canaryTo(other))).not.toContain('keep this to yourselves');
    const served = await chat('what is the tallest tree?');
    const notServed = entries().find((e) => e.node.nodeId !== served)!.node.nodeId;
    expect(JSON.stringify(await canaryTo(served))).not.toContain('tallest tree');
    expect(await canaryTo(notServed)).toEqual({
      model: REFERENCE_CHAT_MODEL,
      messages: [{ role: 'user', content: 'what is the tallest tree?' }],
      max_tokens: 8,
    });
    // Replayed once to that node, never again.
    expect(JSON.stringify(await canaryTo(notServed))).not.toContain('tallest tree');
  });
});
