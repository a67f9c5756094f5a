/**
 * The router end to end over real sockets: a coordinator listening on a port, nodes connected over
 * WebSocket (the fixed-reply bench node, for exact and known token counts), HTTP requests with a
 * real sk- key, the real ledger on SQLite and PostgreSQL (test/support/router-harness.ts). What a
 * cut or lying request is billed: test/router-billing.test.ts.
 */
import { usdOffer } from '@gpumesh/node/testing';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { toBigInt } from '../coordinator/src/db/bigint.js';
import { credit } from '../coordinator/src/ledger/credit.js';
import { testBackends } from '../coordinator/src/testing/test-backends.js';
import { until } from '../coordinator/src/testing/until.js';
import { expectedNano, USD } from './support/expected-charge.js';
import {
  addMisbehavingNode,
  addNode,
  chat,
  type Harness,
  startRouterHarness,
  usageRows,
} from './support/router-harness.js';

const sqlite = testBackends().find((b) => b.name === 'sqlite')!;

describe('router e2e [sqlite]', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startRouterHarness(sqlite, 'router');
    await credit(h.db, { userId: h.userId, amountNano: 10n * USD, ref: 'seed' });
  });
  afterAll(() => h?.close());

  test('default: the cheaper of two nodes always serves, billing exact to the nanousd', async () => {
    const cheap = await addNode(h, { models: [usdOffer('m', USD, 2n * USD)], promptTokens: 42 });
    const dear = await addNode(h, { models: [usdOffer('m', 3n * USD, 3n * USD)], promptTokens: 42 });
    const before = await h.ledger.balance(h.userId);
    for (let i = 0; i < 5; i++) {
      const r = await chat(h, {});
      expect(r.status, r.body).toBe(200);
      expect(r.headers.get('x-gpumesh-node')).toBe(cheap.nodeId);
      expect(r.headers.get('x-request-id')).toMatch(/^req_/);
      const body = JSON.parse(r.body);
      expect(body.usage).toMatchObject({ prompt_tokens: 42, completion_tokens: 6, total_tokens: 48 });
      expect(body.usage.cost).toBe(Number(expectedNano(42, 6, 1n, 2n)) / 1e9);
    }
    expect(cheap.jobs).toBe(5);
    expect(dear.jobs).toBe(0);
    const after = await h.ledger.balance(h.userId);
    expect(before.balanceNano - after.balanceNano).toBe(5n * expectedNano(42, 6, 1n, 2n));
    // Kill the cheap one: the dear one serves, and the user pays once, at its price.
    cheap.kill();
    await until(() => !h.app.hub.index.node(cheap.nodeId));
    const r = await chat(h, {});
    expect(r.status).toBe(200);
    expect(r.headers.get('x-gpumesh-node')).toBe(dear.nodeId);
    const last = await h.ledger.balance(h.userId);
    expect(after.balanceNano - last.balanceNano).toBe(expectedNano(42, 6, 3n, 3n));
    dear.kill();
    await until(() => !h.app.hub.index.hasModel('m'));
  });

  test('behavior: a node failing before the first token fails over; the user pays once', async () => {
    const failing = await addNode(h, { models: [usdOffer('m', USD, USD)], failBeforeFirstToken: true });
    const good = await addNode(h, { models: [usdOffer('m', 2n * USD, 2n * USD)], promptTokens: 7 });
    const before = await h.ledger.balance(h.userId);
    const rows0 = (await usageRows(h)).length;
    for (const stream of [false, true]) {
      const r = await chat(h, { stream });
      expect(r.status).toBe(200);
      expect(r.headers.get('x-gpumesh-node')).toBe(good.nodeId);
    }
    // Its miss demoted it: the second request went straight to the good node.
    expect(failing.jobs).toBe(1);
    const after = await h.ledger.balance(h.userId);
    expect(before.balanceNano - after.balanceNano).toBe(2n * expectedNano(7, 6, 2n, 2n));
    expect(after.reservedNano).toBe(0n);
    expect((await usageRows(h)).length).toBe(rows0 + 2);
    failing.kill();
    good.kill();
    await until(() => !h.app.hub.index.hasModel('m'));
  });

  test('behavior: max_price excludes the node it should, and names the constraint', async () => {
    const cheapIn = await addNode(h, { models: [usdOffer('m', USD, 5n * USD)] });
    const cheapOut = await addNode(h, { models: [usdOffer('m', 4n * USD, 2n * USD)] });
    const r1 = await chat(h, { provider: { max_price: { completion: 3 } } });
    expect(r1.headers.get('x-gpumesh-node')).toBe(cheapOut.nodeId);
    const r2 = await chat(h, { provider: { max_price: { prompt: '1.5' } } });
    expect(r2.headers.get('x-gpumesh-node')).toBe(cheapIn.nodeId);
    const r3 = await chat(h, { provider: { max_price: { prompt: 0.5, completion: 0.5 } } });
    expect(r3.status).toBe(503);
    expect(JSON.parse(r3.body)).toEqual({
      error: {
        message: expect.stringContaining('2 excluded by max_price'),
        type: expect.any(String),
        code: 'no_provider_available',
        param: 'provider.max_price',
      },
    });
    const r4 = await chat(h, { provider: { order: [cheapOut.nodeId], allow_fallbacks: false } });
    expect(r4.headers.get('x-gpumesh-node')).toBe(cheapOut.nodeId);
    cheapIn.kill();
    cheapOut.kill();
    await until(() => !h.app.hub.index.hasModel('m'));
  });

  test('behavior: the catalog lists exactly what live nodes serve and drops a model with its last node', async () => {
    const get = async (path: string, auth: string) =>
      (await fetch(`${h.base}${path}`, { headers: { authorization: `Bearer ${auth}` } })).json() as Promise<{
        data: { id: string }[];
      }>;
    expect((await get('/api/router/models', h.jwt)).data).toEqual([]);
    const a = await addNode(h, { models: [usdOffer('x', USD, 2n * USD), usdOffer('y', 3n * USD, 3n * USD)] });
    const b = await addNode(h, { models: [usdOffer('x', 3n * USD, 4n * USD)] });
    const models = await get('/api/router/models', h.jwt);
    expect(models.data).toEqual([
      expect.objectContaining({
        id: 'x',
        // Neither node is verified yet (no verifier here): both serve, both on probation.
        liveNodes: 2,
        verifiedNodes: 0,
        probationNodes: 2,
        cheapest: {
          prompt: expect.objectContaining({ usd: 1 }),
          completion: expect.objectContaining({ usd: 2 }),
        },
        median: {
          prompt: expect.objectContaining({ usd: 1 }),
          completion: expect.objectContaining({ usd: 2 }),
        },
      }),
      expect.objectContaining({ id: 'y', liveNodes: 1, verifiedNodes: 0, probationNodes: 1 }),
    ]);
    const v1 = await get('/v1/models', h.key);
    expect(v1.data.map((m) => m.id)).toEqual(['x', 'y']);
    await a.stop();
    await until(() => !h.app.hub.index.hasModel('y'));
    expect((await get('/api/router/models', h.jwt)).data.map((m) => m.id)).toEqual(['x']);
    b.kill();
    await until(() => !h.app.hub.index.hasModel('x'));
    expect((await get('/v1/models', h.key)).data).toEqual([]);
  });

  test('behavior: the usage summary equals the sum of the usage rows', async () => {
    const res = await fetch(`${h.base}/api/router/usage?from=2000-01-01&to=2099-12-31`, {
      headers: { authorization: `Bearer ${h.jwt}` },
    });
    // 2099 is beyond the range limit: refused in the common shape.
    expect(res.status).toBe(400);
    const today = new Date().toISOString().slice(0, 10);
    const summary = (await (
      await fetch(`${h.base}/api/router/usage?from=${today}&to=${today}`, {
        headers: { authorization: `Bearer ${h.jwt}` },
      })
    ).json()) as {
      totals: { requests: number; promptTokens: number; completionTokens: number; costNano: string };
      byModel: { costNano: string }[];
      byKey: { keyId: string; costNano: string }[];
      byDay: { day: string; requests: number }[];
    };
    const rows = await usageRows(h);
    expect(rows.length).toBeGreaterThan(5);
    expect(summary.totals.requests).toBe(rows.length);
    expect(summary.totals.promptTokens).toBe(rows.reduce((s, r) => s + Number(r.prompt_tokens), 0));
    expect(summary.totals.completionTokens).toBe(rows.reduce((s, r) => s + Number(r.completion_tokens), 0));
    const sum = rows.reduce((s, r) => s + toBigInt(r.cost_nano), 0n);
    expect(BigInt(summary.totals.costNano)).toBe(sum);
    expect(summary.byModel.reduce((s, m) => s + BigInt(m.costNano), 0n)).toBe(sum);
    expect(summary.byKey).toEqual([expect.objectContaining({ keyId: h.keyId, costNano: sum.toString() })]);
    expect(summary.byDay).toEqual([expect.objectContaining({ day: today, requests: rows.length })]);
    // ... and the user's spend is the same figure.
    expect((await h.ledger.balance(h.userId)).spendNano).toBe(sum);
  });

  test('error: credentials, limits and unknown models in the common shape', async () => {
    const post = (auth: string, body: unknown) =>
      fetch(`${h.base}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${auth}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const msg = [{ role: 'user', content: 'hi' }];
    const jwtRefused = await post(h.jwt, { model: 'm', messages: msg });
    expect(jwtRefused.status).toBe(401);
    expect(((await jwtRefused.json()) as { error: { code: string } }).error.code).toBe('invalid_credential');
    expect((await post('sk-nope', { model: 'm', messages: msg })).status).toBe(401);
    const unknown = await post(h.key, { model: 'nope', messages: msg });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe('model_not_found');
    await addNode(h, { models: [usdOffer('m', USD, USD)] });
    const tooMany = await post(h.key, { model: 'm', messages: Array.from({ length: 257 }, () => msg[0]) });
    expect(tooMany.status).toBe(400);
    const bigMax = await post(h.key, { model: 'm', messages: msg, max_tokens: 1_000_000 });
    expect(bigMax.status).toBe(400);
    expect(((await bigMax.json()) as { error: { param: string } }).error.param).toBe('max_tokens');
    const n5 = await post(h.key, { model: 'm', messages: msg, n: 5 });
    expect(n5.status).toBe(400);
    const huge = await post(h.key, {
      model: 'm',
      messages: [{ role: 'user', content: 'x'.repeat(2 * 1024 * 1024) }],
    });
    expect(huge.status).toBe(413);
  });
});

describe.each(testBackends())('router e2e, 500 concurrent requests [$name]', (backend) => {
  let h: Harness;
  beforeAll(async () => {
    if (backend.skip) return;
    h = await startRouterHarness(backend, 'r500');
    // The node reports exactly the reserved worst case (prompt bound 50, max_tokens 6), so each
    // request costs what it reserved and a balance for N requests admits exactly N.
    await addNode(h, { models: [usdOffer('m', USD, 2n * USD, { maxConcurrency: 64 })], promptTokens: 50 });
  });
  afterAll(() => h?.close());

  test.skipIf(backend.skip)(
    'behavior: a balance covering exactly N admits exactly N; the rest get 402',
    async () => {
      // The reservation is the worst case: prompt bound (2 bytes + 16 per message + 32) and max_tokens 6.
      const body = { model: 'm', messages: [{ role: 'user', content: 'hi' }], max_tokens: 6 };
      const cost = expectedNano(50, 6, 1n, 2n);
      const N = 40;
      await credit(h.db, { userId: h.userId, amountNano: cost * BigInt(N), ref: `n-${backend.name}` });
      const results = await Promise.all(
        Array.from({ length: 500 }, () =>
          h.app.inject({
            method: 'POST',
            url: '/v1/chat/completions',
            headers: { authorization: `Bearer ${h.key}` },
            payload: body,
          }),
        ),
      );
      const ok = results.filter((r) => r.statusCode === 200);
      const statuses = results.reduce<Record<number, number>>(
        (m, r) => ({ ...m, [r.statusCode]: (m[r.statusCode] ?? 0) + 1 }),
        {},
      );
      expect(statuses, results.find((r) => r.statusCode !== 200 && r.statusCode !== 402)?.body).toEqual({
        200: N,
        402: 500 - N,
      });
      const refused = results.filter((r) => r.statusCode === 402);
      expect(ok).toHaveLength(N);
      expect(refused).toHaveLength(500 - N);
      expect(refused[0]!.json()).toMatchObject({ error: { code: 'insufficient_credits' } });
      expect(ok[0]!.json().usage.cost).toBe(Number(cost) / 1e9);
      expect(await h.ledger.balance(h.userId)).toEqual({
        balanceNano: 0n,
        reservedNano: 0n,
        spendNano: cost * BigInt(N),
      });
      const rows = await usageRows(h);
      expect(rows).toHaveLength(N);
      // The key's spend, added once per group commit, is the same sum.
      const key = await h.db.selectFrom('api_keys').select('spend_nano').executeTakeFirstOrThrow();
      expect(toBigInt(key.spend_nano)).toBe(cost * BigInt(N));
    },
  );
});

describe('router e2e, every fitting node busy [sqlite]', () => {
  /** How long a request waits in line for a slot here (the default is 10 s). */
  const QUEUE_WAIT_MS = 200;
  let h: Harness;
  beforeAll(async () => {
    h = await startRouterHarness(sqlite, 'busy', { router: { queueWaitMs: QUEUE_WAIT_MS } });
    await credit(h.db, { userId: h.userId, amountNano: USD, ref: 'seed' });
  });
  afterAll(() => h?.close());

  test("behavior: a request whose one node stays busy waits in line, then gets OpenAI's overloaded answer: 503 with Retry-After in the common shape; the SDK's retry gets through", async () => {
    // One slot, and a streamed answer that holds it for 6 × 200 ms.
    const node = await addNode(h, {
      models: [usdOffer('m', USD, 2n * USD, { maxConcurrency: 1 })],
      chunkDelayMs: 200,
    });
    const first = chat(h, { stream: true });
    await until(() => node.jobs === 1);
    const started = performance.now();
    const busy = await chat(h, { stream: true });
    const waited = performance.now() - started;
    // An HTTP status before any stream byte, never a hang, a 5xx of ours or a stream that errors.
    expect(busy.status, busy.body).toBe(503);
    expect(busy.headers.get('retry-after')).toBe('1');
    expect(busy.headers.get('content-type')).toMatch(/^application\/json/);
    expect(JSON.parse(busy.body)).toEqual({
      error: {
        message: expect.stringContaining('at capacity'),
        type: 'api_error',
        code: 'no_provider_available',
        param: null,
      },
    });
    expect(waited).toBeGreaterThanOrEqual(QUEUE_WAIT_MS - 5);
    // The official SDK retries a 503 after its Retry-After (its first try meets the busy node
    // again, ~1 s of the first answer left): by then the slot is free.
    const client = new OpenAI({ apiKey: h.key, baseURL: `${h.base}/v1`, maxRetries: 2 });
    const retried = performance.now();
    const answer = await client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(answer.choices[0]!.message.content).toBe('Hello from a fixed node.');
    expect(performance.now() - retried).toBeGreaterThanOrEqual(1_000);
    expect((await first).status).toBe(200);
    expect(node.jobs).toBe(2);
  });
});

describe('router e2e, per-key rate limit [sqlite]', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startRouterHarness(sqlite, 'rl', {
      rateLimit: { enabled: true, userMax: 3, windowMs: 60_000 },
    });
  });
  afterAll(() => h?.close());

  test('behavior: a key over its limit gets 429 rate_limited with Retry-After', async () => {
    const get = () => fetch(`${h.base}/v1/models`, { headers: { authorization: `Bearer ${h.key}` } });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await get()).status);
    expect(statuses).toEqual([200, 200, 200]);
    const limited = await get();
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await limited.json()) as { error: { code: string } }).error.code).toBe('rate_limited');
  });
});

describe('router e2e, stopping the coordinator [sqlite]', () => {
  test('behavior: a stopping coordinator says bye and closes each node session with 1000, not 1006', async () => {
    const h = await startRouterHarness(sqlite, 'stop');
    const node = await addMisbehavingNode(h);
    const closing = h.app.close();
    // NODE_PROTOCOL.md §8 "Coordinator shutdown".
    expect(await node.closed).toEqual({ code: 1000, bye: true });
    await closing;
    await h.close();
  });
});
