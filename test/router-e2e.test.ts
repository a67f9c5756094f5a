/**
 * The router end to end over real sockets: a coordinator listening on a port, nodes connected over
 * WebSocket (the fixed-reply bench node, for exact and known token counts), HTTP requests with a
 * real sk- key, the real ledger on SQLite and PostgreSQL.
 */
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import {
  type FixedReplyNode,
  type NodeDaemon,
  type NodeDaemonOptions,
  startFixedReplyNode,
  startNodeDaemon,
  usdOffer,
} from '@gpumesh/node/testing';
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildApp } from '../coordinator/src/app.js';
import { loadConfig } from '../coordinator/src/config.js';
import { toBigInt } from '../coordinator/src/db/bigint.js';
import type { Database } from '../coordinator/src/db/schema.js';
import { HUB_PATH } from '../coordinator/src/hub/hub-plugin.js';
import { EMPTY_TEXT_TOKENS_PER_CHOICE } from '../coordinator/src/ledger/bound-usage.js';
import { credit } from '../coordinator/src/ledger/credit.js';
import type { Ledger } from '../coordinator/src/ledger/ledger.js';
import { expectBooksBalanced } from '../coordinator/src/testing/expect-books-balanced.js';
import { signIn } from '../coordinator/src/testing/sign-in.js';
import {
  type TestBackend,
  type TestDatabase,
  testBackends,
} from '../coordinator/src/testing/test-backends.js';
import { until } from '../coordinator/src/testing/until.js';
import { estimatePromptTokens } from '../coordinator/src/v1/estimate-prompt-tokens.js';
import { streamThenLeave } from './support/stream-then-leave.js';

const USD = 1_000_000_000n;
const FEE_BPS = 500;

type Harness = {
  app: FastifyInstance;
  db: Kysely<Database>;
  ledger: Ledger;
  base: string;
  wsUrl: string;
  key: string;
  keyId: string;
  userId: string;
  jwt: string;
  nodes: (FixedReplyNode | NodeDaemon)[];
  close(): Promise<void>;
};

async function start(
  backend: TestBackend,
  label: string,
  overrides: Record<string, unknown> = {},
): Promise<Harness> {
  const store: TestDatabase = await backend.open(label);
  const config = loadConfig({
    overrides: {
      dataDir: store.dataDir,
      databaseUrl: store.databaseUrl,
      databaseSchema: store.databaseSchema,
      masterKey: randomBytes(32).toString('hex'),
      logLevel: 'silent',
      rateLimit: { enabled: false },
      platformFeeBps: FEE_BPS,
      ...overrides,
    },
  });
  // Every test node's owner counts as platinum (64 concurrent jobs), so concurrency tests are not capped at 1.
  const app = await buildApp({
    config,
    store: store.store,
    logger: false,
    tierOf: async () => 'platinum',
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as AddressInfo).port;
  const account = privateKeyToAccount(generatePrivateKey());
  const jwt = await signIn(app, account);
  const user = (
    await app.inject({ method: 'GET', url: '/api/user', headers: { authorization: `Bearer ${jwt}` } })
  ).json() as { id: string };
  const created = await app.inject({
    method: 'POST',
    url: '/api/router/keys',
    headers: { authorization: `Bearer ${jwt}` },
    payload: { name: 'e2e' },
  });
  const { key, id: keyId } = created.json() as { key: string; id: string };
  const nodes: (FixedReplyNode | NodeDaemon)[] = [];
  return {
    app,
    db: store.db,
    ledger: app.ctx.ledger,
    base: `http://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${port}${HUB_PATH}`,
    key,
    keyId,
    userId: user.id,
    jwt,
    nodes,
    async close() {
      for (const n of nodes) n.kill();
      // Whatever the suite did, the ledger adds up at its end.
      await expectBooksBalanced(app.ctx);
      await app.close();
      await store.close();
    },
  };
}

const OWNER = generatePrivateKey();
/** What the fixed-reply nodes answer, as tokens (the stand-in's default too). */
const DEFAULT_REPLY = ['Hello', ' from', ' a', ' fixed', ' node', '.'];

/** A real node daemon (in this process, on its fixed-reply runtime), online in the hub. */
async function addNode(h: Harness, options: Partial<NodeDaemonOptions> = {}) {
  const node = await startNodeDaemon({
    url: h.wsUrl,
    ownerPrivateKey: OWNER,
    models: [usdOffer('m', USD, 2n * USD)],
    replyTokens: DEFAULT_REPLY,
    ...options,
  });
  h.nodes.push(node);
  await until(() => h.app.hub.index.node(node.nodeId)?.state === 'online');
  return node;
}

/**
 * A misbehaving node stand-in (fixed-reply-node.ts), for what no honest daemon does: lie about
 * usage, overstate chunk.tokens, die abruptly mid-stream.
 */
async function addMisbehavingNode(
  h: Harness,
  options: Partial<Parameters<typeof startFixedReplyNode>[0]> = {},
) {
  const node = startFixedReplyNode({
    url: h.wsUrl,
    ownerPrivateKey: OWNER,
    models: [usdOffer('m', USD, 2n * USD)],
    ...options,
  });
  h.nodes.push(node);
  await node.ready;
  await until(() => h.app.hub.index.node(node.nodeId)?.state === 'online');
  return node;
}

async function chat(h: Harness, body: Record<string, unknown>) {
  const res = await fetch(`${h.base}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${h.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }], ...body }),
  });
  return { status: res.status, headers: res.headers, body: (await res.text()) as string };
}

async function usageRows(h: Harness) {
  await h.ledger.idle(); // settlements commit after the answer
  return h.db
    .selectFrom('usage_records')
    .selectAll()
    .where('user_id', '=', h.userId)
    .orderBy('created_at')
    .execute();
}

/** Expected charge in nanousd for the fixed node's usage at (in, out) USD per million. */
function expectedNano(prompt: number, completion: number, inUsd: bigint, outUsd: bigint): bigint {
  const provider = (BigInt(prompt) * inUsd * USD + BigInt(completion) * outUsd * USD + 999_999n) / 1_000_000n;
  const fee = (provider * BigInt(FEE_BPS) + 9_999n) / 10_000n;
  return provider + fee;
}

const sqlite = testBackends().find((b) => b.name === 'sqlite')!;

/** What a cut request pays for the prompt of `chat()` ("hi") when the node sends no count. */
const HI_PROMPT_BOUND = estimatePromptTokens('chat', { messages: [{ role: 'user', content: 'hi' }] });

describe('router e2e [sqlite]', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await start(sqlite, 'router');
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

  test('behavior: a node killed mid-stream leaves a usage row billed for the tokens delivered', async () => {
    const node = await addMisbehavingNode(h, {
      models: [usdOffer('m', USD, 2n * USD)],
      dieAfterChunks: 3,
      chunkDelayMs: 5,
    });
    const before = await h.ledger.balance(h.userId);
    const r = await chat(h, { stream: true });
    expect(r.status).toBe(200);
    const events = r.body.split('\n\n').filter(Boolean);
    expect(events.filter((e) => e.includes('chat.completion.chunk'))).toHaveLength(3);
    expect(JSON.parse(events.at(-2)!.slice(6))).toMatchObject({ error: { code: 'provider_error' } });
    expect(events.at(-1)).toBe('data: [DONE]');
    const row = (await usageRows(h)).at(-1)!;
    expect(row.status).toBe('node_failed');
    expect(Number(row.completion_tokens)).toBe(3);
    // The node had evaluated the prompt: it is billed at the coordinator's bound (no count came).
    expect(Number(row.prompt_tokens)).toBe(HI_PROMPT_BOUND);
    expect(toBigInt(row.cost_nano)).toBe(expectedNano(HI_PROMPT_BOUND, 3, 1n, 2n));
    const after = await h.ledger.balance(h.userId);
    expect(before.balanceNano - after.balanceNano).toBe(expectedNano(HI_PROMPT_BOUND, 3, 1n, 2n));
    expect(after.reservedNano).toBe(0n);
    expect(node.jobs).toBe(1);
  });

  test('behavior: a stream cut mid-way is billed by the tokens its chunks carry (chunk.tokens)', async () => {
    const node = await addMisbehavingNode(h, {
      models: [usdOffer('m', USD, 2n * USD)],
      dieAfterChunks: 3,
      chunkDelayMs: 5,
      tokensPerChunk: 4,
    });
    const before = await h.ledger.balance(h.userId);
    const r = await chat(h, { stream: true });
    expect(r.status).toBe(200);
    const events = r.body.split('\n\n').filter(Boolean);
    expect(events.filter((e) => e.includes('chat.completion.chunk'))).toHaveLength(3);
    const row = (await usageRows(h)).at(-1)!;
    expect(row.status).toBe('node_failed');
    expect(Number(row.completion_tokens)).toBe(12);
    expect(toBigInt(row.cost_nano)).toBe(expectedNano(HI_PROMPT_BOUND, 12, 1n, 2n));
    const after = await h.ledger.balance(h.userId);
    expect(before.balanceNano - after.balanceNano).toBe(expectedNano(HI_PROMPT_BOUND, 12, 1n, 2n));
    expect(node.jobs).toBe(1);
  });

  test('behavior: a node cannot bill a cut stream beyond max_tokens by overstating chunk.tokens', async () => {
    await addMisbehavingNode(h, {
      models: [usdOffer('m', USD, 2n * USD)],
      dieAfterChunks: 3,
      chunkDelayMs: 5,
      tokensPerChunk: 1000,
    });
    const r = await chat(h, { stream: true, max_tokens: 10 });
    expect(r.status).toBe(200);
    const row = (await usageRows(h)).at(-1)!;
    expect(row.status).toBe('node_failed');
    expect(Number(row.completion_tokens)).toBe(10);
    expect(toBigInt(row.cost_nano)).toBe(expectedNano(HI_PROMPT_BOUND, 10, 1n, 2n));
  });

  test('behavior: a client that disconnects mid-stream is billed for what it received', async () => {
    const node = await addNode(h, {
      models: [usdOffer('m', USD, 2n * USD)],
      replyTokens: Array.from({ length: 200 }, (_, i) => ` t${i}`),
      chunkDelayMs: 10,
      promptTokens: 10,
    });
    const before = await h.ledger.balance(h.userId);
    await streamThenLeave(
      `${h.base}/v1/chat/completions`,
      h.key,
      { model: 'm', messages: [{ role: 'user', content: 'hi' }], max_tokens: 200 },
      5,
    );
    await until(() => node.cancelled.length === 1);
    await until(() => h.app.hub.index.node(node.nodeId)!.entries.get('m')!.inflight === 0);
    const row = (await usageRows(h)).at(-1)!;
    expect(row.status).toBe('client_disconnected');
    const delivered = Number(row.completion_tokens);
    expect(delivered).toBeGreaterThanOrEqual(5);
    expect(delivered).toBeLessThan(200);
    const after = await h.ledger.balance(h.userId);
    // The prompt the node evaluated, as its job_cancelled reported (10, under the bound of 50).
    expect(Number(row.prompt_tokens)).toBe(10);
    expect(before.balanceNano - after.balanceNano).toBe(expectedNano(10, delivered, 1n, 2n));
    expect(after.reservedNano).toBe(0n);
    node.kill();
    await until(() => !h.app.hub.index.hasModel('m'));
  });

  test('behavior: a client that leaves a non-streamed request cancels its job and pays the prompt only', async () => {
    const node = await addNode(h, {
      models: [usdOffer('m', USD, 2n * USD)],
      replyTokens: Array.from({ length: 200 }, (_, i) => ` t${i}`),
      quietDelayMs: 10,
      promptTokens: 10,
    });
    const before = await h.ledger.balance(h.userId);
    const controller = new AbortController();
    const request = fetch(`${h.base}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }], max_tokens: 200 }),
      signal: controller.signal,
    }).catch((error: unknown) => error);
    await until(() => h.app.hub.index.node(node.nodeId)!.entries.get('m')!.inflight === 1);
    controller.abort();
    await request;
    // NODE_PROTOCOL.md §9: the coordinator cancels when the client disconnects, streamed or not.
    await until(() => node.cancelled.length === 1);
    await until(() => h.app.hub.index.node(node.nodeId)!.entries.get('m')!.inflight === 0);
    const row = (await usageRows(h)).at(-1)!;
    expect(row.status).toBe('client_disconnected');
    expect(Number(row.completion_tokens)).toBe(0);
    expect(Number(row.prompt_tokens)).toBe(10);
    const after = await h.ledger.balance(h.userId);
    expect(before.balanceNano - after.balanceNano).toBe(expectedNano(10, 0, 1n, 2n));
    expect(after.reservedNano).toBe(0n);
    node.kill();
    await until(() => !h.app.hub.index.hasModel('m'));
  });

  test('attack: a node claiming 1e9 prompt and 1e9 completion tokens for "hi" bills within the bound', async () => {
    const liar = await addMisbehavingNode(h, {
      models: [usdOffer('m', USD, 2n * USD)],
      promptTokens: 1e9,
      completionTokens: 1e9,
    });
    const metric = async (): Promise<[number, number]> => {
      const text = await (await fetch(`${h.base}/metrics`)).text();
      const line = (kind: string) =>
        text.match(new RegExp(`gpumesh_usage_clamped_total\\{kind="${kind}"\\} (\\d+)`));
      return [Number(line('prompt')?.[1] ?? 0), Number(line('completion')?.[1] ?? 0)];
    };
    const [prompt0, completion0] = await metric();
    const before = await h.ledger.balance(h.userId);
    for (const stream of [false, true]) {
      const r = await chat(h, { stream, stream_options: { include_usage: true } });
      expect(r.status).toBe(200);
      const body = stream
        ? JSON.parse(
            r.body
              .split('\n\n')
              .filter((e) => e.includes('"usage"'))
              .at(-1)!
              .slice(6),
          )
        : JSON.parse(r.body);
      const text: string = stream
        ? r.body
            .split('\n\n')
            .filter((e) => e.startsWith('data: {'))
            .map((e) => JSON.parse(e.slice(6)).choices?.[0]?.delta?.content ?? '')
            .join('')
        : body.choices[0].message.content;
      // The client sees the bounded counts: the prompt's bound, and the reply's bytes + slack.
      const completion = Buffer.byteLength(text) + EMPTY_TEXT_TOKENS_PER_CHOICE;
      expect(body.usage).toMatchObject({
        prompt_tokens: HI_PROMPT_BOUND,
        completion_tokens: completion,
        total_tokens: HI_PROMPT_BOUND + completion,
      });
    }
    const rows = (await usageRows(h)).slice(-2);
    for (const row of rows) expect(Number(row.prompt_tokens)).toBe(HI_PROMPT_BOUND);
    const after = await h.ledger.balance(h.userId);
    const charged = rows.reduce((sum, row) => sum + toBigInt(row.cost_nano), 0n);
    expect(before.balanceNano - after.balanceNano).toBe(charged);
    // Under a cent for two "hi"s, where the claim would have taken the whole hold.
    expect(charged).toBeLessThan(2n * expectedNano(HI_PROMPT_BOUND, 200, 1n, 2n));
    const [prompt1, completion1] = await metric();
    expect([prompt1 - prompt0, completion1 - completion0]).toEqual([2, 2]);
    // Counted against the node (written beside the bill, off the request path).
    await expect
      .poll(async () => {
        const row = await h.db
          .selectFrom('node_usage_violations')
          .select('violations')
          .where('node_id', '=', liar.nodeId)
          .executeTakeFirst();
        return Number(row?.violations ?? 0);
      })
      .toBe(2);
    liar.kill();
    await until(() => !h.app.hub.index.hasModel('m'));
  });

  test('behavior: a long prompt and an immediate abort pays the prompt: the node’s count, capped at the bound', async () => {
    const content = 'lorem ipsum '.repeat(500);
    const bound = estimatePromptTokens('chat', { messages: [{ role: 'user', content }] });
    // An honest count (under the bound) is what the client pays; a lie is capped at the bound.
    for (const [reported, billed] of [
      [1_234, 1_234],
      [1e9, bound],
    ] as const) {
      // Honest (1,234) and lying (1e9) prompt counts: the stand-in reports what it is told.
      const node = await addMisbehavingNode(h, {
        models: [usdOffer('m', USD, 2n * USD)],
        replyTokens: Array.from({ length: 200 }, (_, i) => ` t${i}`),
        chunkDelayMs: 10,
        promptTokens: reported,
      });
      const before = await h.ledger.balance(h.userId);
      await streamThenLeave(
        `${h.base}/v1/chat/completions`,
        h.key,
        { model: 'm', messages: [{ role: 'user', content }], max_tokens: 200 },
        1,
      );
      await until(() => node.cancelled.length === 1);
      await until(() => h.app.hub.index.node(node.nodeId)!.entries.get('m')!.inflight === 0);
      const row = (await usageRows(h)).at(-1)!;
      expect(row.status).toBe('client_disconnected');
      expect(Number(row.prompt_tokens)).toBe(billed);
      const after = await h.ledger.balance(h.userId);
      expect(before.balanceNano - after.balanceNano).toBe(
        expectedNano(billed, Number(row.completion_tokens), 1n, 2n),
      );
      node.kill();
      await until(() => !h.app.hub.index.hasModel('m'));
    }
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
    h = await start(backend, 'r500');
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

describe('router e2e, per-key rate limit [sqlite]', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await start(sqlite, 'rl', { rateLimit: { enabled: true, userMax: 3, windowMs: 60_000 } });
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
    const h = await start(sqlite, 'stop');
    const node = await addMisbehavingNode(h);
    const closing = h.app.close();
    // NODE_PROTOCOL.md §8 "Coordinator shutdown".
    expect(await node.closed).toEqual({ code: 1000, bye: true });
    await closing;
    await h.close();
  });
});
