/**
 * What OpenAI and OpenRouter clients rely on at the HTTP level, against a coordinator with a real
 * node daemon (its fixed-reply runtime): request ids on every response, CORS for the browser SDK,
 * 405 with Allow, models.retrieve, the key and generation lookups with the sk- key, per-key credit
 * limits, context_length_exceeded, one finish reason per stream and the usage chunk on request,
 * and the embeddings input forms.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Daemon, loadConfig as loadNodeConfig, startDaemon } from '@gpumesh/node';
import { createFixedReplyRuntime } from '@gpumesh/node/testing';
import OpenAI from 'openai';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { isErrorBody } from '../coordinator/src/errors.js';
import { HUB_PATH } from '../coordinator/src/hub/hub-plugin.js';
import { credit } from '../coordinator/src/ledger/credit.js';
import {
  createTestApp,
  expectBooksBalanced,
  signIn,
  type TestApp,
  testBackends,
} from '../coordinator/src/testing/index.js';

const USD = 1_000_000_000n;
const CONTEXT = 256;
const SLOW_JOB_TOKENS = 7;
const SLOW_JOB_MS = 20;
const sqlite = testBackends().find((b) => b.name === 'sqlite')!;

describe('API parity with OpenAI and OpenRouter clients', () => {
  let t: TestApp;
  let daemon: Daemon;
  let base: string;
  let jwt: string;
  let key: string;
  let client: OpenAI;
  const dir = mkdtempSync(path.join(tmpdir(), 'gm-parity-'));

  const post = (url: string, body: unknown, token = key) =>
    fetch(`${base}${url}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const get = (url: string, token = key) =>
    fetch(`${base}${url}`, { headers: { authorization: `Bearer ${token}` } });
  const newKey = async (payload: Record<string, unknown>) =>
    (
      await t.app.inject({
        method: 'POST',
        url: '/api/router/keys',
        headers: { authorization: `Bearer ${jwt}` },
        payload,
      })
    ).json() as { key: string; id: string; limit: number | null };

  beforeAll(async () => {
    t = await createTestApp(sqlite, { label: 'parity' });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    jwt = await signIn(t.app, privateKeyToAccount(generatePrivateKey()));
    const user = (
      await t.app.inject({ method: 'GET', url: '/api/user', headers: { authorization: `Bearer ${jwt}` } })
    ).json() as { id: string };
    key = (await newKey({ name: 'parity' })).key;
    await credit(t.db, { userId: user.id, amountNano: 100n * USD, ref: 'parity-seed' });
    const fixed = createFixedReplyRuntime({
      models: [
        { id: 'org/fixed', family: 'chat', contextLength: CONTEXT, maxConcurrency: 8 },
        { id: 'embed', family: 'embedding', contextLength: CONTEXT, maxConcurrency: 8 },
      ],
      reply: 'one two three',
    });
    // A job asking for exactly SLOW_JOB_TOKENS takes SLOW_JOB_MS (a GPU's pace, for the queue test).
    const runtime = {
      ...fixed,
      run: async (job: Parameters<typeof fixed.run>[0]) => {
        if (job.request.max_tokens === SLOW_JOB_TOKENS) await new Promise((r) => setTimeout(r, SLOW_JOB_MS));
        return fixed.run(job);
      },
    };
    const config = loadNodeConfig({
      env: {},
      flags: {
        coordinator: `${base.replace('http', 'ws')}${HUB_PATH}`,
        'state-dir': dir,
        'health-port': '0',
      },
    });
    daemon = await startDaemon(config, { runtime });
    await vi.waitFor(
      () => {
        if (
          !t.app.hub.index.pick({ modelId: 'org/fixed' }).ok ||
          !t.app.hub.index.pick({ modelId: 'embed' }).ok
        )
          throw new Error('the node is not online yet');
      },
      { timeout: 30_000, interval: 20 },
    );
    client = new OpenAI({ apiKey: key, baseURL: `${base}/v1`, maxRetries: 0 });
  }, 60_000);

  afterAll(async () => {
    await daemon?.shutdown();
    if (t) await expectBooksBalanced(t.app.ctx);
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('default: every response carries x-request-id, errors and 401s included', async () => {
    const ok = await get('/v1/models');
    const unauthenticated = await get('/v1/models', 'sk-nope');
    const invalid = await post('/v1/chat/completions', { model: 'org/fixed', messages: [] });
    const missing = await get('/v1/nope');
    for (const res of [ok, unauthenticated, invalid, missing]) {
      expect(res.headers.get('x-request-id'), String(res.status)).toMatch(/^req_[0-9a-f]{32}$/);
    }
    expect([ok.status, unauthenticated.status, invalid.status, missing.status]).toEqual([200, 401, 400, 404]);
  });

  test('default: a browser SDK preflight with x-stainless headers passes, and ids are readable', async () => {
    const preflight = await fetch(`${base}/v1/chat/completions`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization,content-type,x-stainless-os,x-stainless-retry-count',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-headers')).toContain('x-stainless-retry-count');
    const res = await fetch(`${base}/v1/models`, {
      headers: { origin: 'https://app.example', authorization: `Bearer ${key}` },
    });
    expect(res.headers.get('access-control-expose-headers')).toContain('x-request-id');
  });

  test('error: a known path with the wrong method is 405 with Allow', async () => {
    const res = await get('/v1/chat/completions');
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    const body = await res.json();
    expect(isErrorBody(body)).toBe(true);
    expect(body.error.code).toBe('method_not_allowed');
  });

  test('default: models.retrieve, with the id encoded or not; an unknown model is 404', async () => {
    const model = await client.models.retrieve('org/fixed');
    expect(model).toMatchObject({ id: 'org/fixed', object: 'model', context_length: CONTEXT });
    const raw = await get('/v1/models/org/fixed');
    expect(((await raw.json()) as { id: string }).id).toBe('org/fixed');
    const unknown = await get('/v1/models/nope');
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe('model_not_found');
  });

  test('default: the generation lookup reports what the response billed', async () => {
    const res = await client.chat.completions.create({
      model: 'org/fixed',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(res.id).toMatch(/^req_/);
    const lookup = await get(`/api/v1/generation?id=${res.id}`);
    expect(lookup.status).toBe(200);
    const { data } = (await lookup.json()) as { data: Record<string, unknown> };
    const usage = res.usage as OpenAI.CompletionUsage & { cost: number };
    expect(data).toMatchObject({
      id: res.id,
      model: 'org/fixed',
      tokens_prompt: usage.prompt_tokens,
      tokens_completion: usage.completion_tokens,
      total_cost: usage.cost,
      finish_reason: 'stop',
      status: 'completed',
    });
    expect(data.latency_ms).toEqual(expect.any(Number));
    // Another account's key cannot read it.
    const otherJwt = await signIn(t.app, privateKeyToAccount(generatePrivateKey()));
    const other = (
      await t.app.inject({
        method: 'POST',
        url: '/api/router/keys',
        headers: { authorization: `Bearer ${otherJwt}` },
        payload: { name: 'other' },
      })
    ).json() as { key: string };
    expect((await get(`/api/v1/generation?id=${res.id}`, other.key)).status).toBe(404);
  });

  test('behavior: a key with a credit limit is refused (402) before its worst case can pass it', async () => {
    const body = { model: 'org/fixed', messages: [{ role: 'user', content: 'hi' }], max_tokens: 16 };
    const one = (await (await post('/v1/chat/completions', body)).json()) as { usage: { cost: number } };
    const cost = one.usage.cost;
    expect(cost).toBeGreaterThan(0);
    const limit = Number((cost * 20).toFixed(9));
    const limited = await newKey({ name: 'limited', limit });
    expect(limited.limit, JSON.stringify(limited)).toBe(limit);
    const statuses: number[] = [];
    let refused: { error: { code: string } } | undefined;
    while (!refused && statuses.length < 100) {
      const res = await post('/v1/chat/completions', body, limited.key);
      statuses.push(res.status);
      if (res.status === 402) refused = (await res.json()) as { error: { code: string } };
      else expect(res.status).toBe(200);
    }
    expect(refused?.error.code).toBe('key_credit_limit_reached');
    // Each request held its worst case (16 completion tokens) against the limit, and paid less.
    expect(statuses.length).toBeGreaterThan(1);
    const info = (await (await get('/api/v1/key', limited.key)).json()) as {
      data: { label: string; usage: number; limit: number; limit_remaining: number; balance: number };
    };
    expect(info.data).toMatchObject({ label: 'limited', limit });
    expect(info.data.usage).toBeCloseTo(cost * (statuses.length - 1), 9);
    expect(info.data.usage).toBeLessThanOrEqual(limit);
    expect(info.data.limit_remaining).toBeCloseTo(limit - info.data.usage, 9);
    expect(info.data.balance).toBeGreaterThan(0);
  });

  test('error: max_tokens that leaves no room in the context is context_length_exceeded', async () => {
    const res = await post('/v1/chat/completions', {
      model: 'org/fixed',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: CONTEXT,
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: unknown }).error).toMatchObject({
      code: 'context_length_exceeded',
      param: 'max_tokens',
    });
  });

  test('default: a stream sends one finish reason, and the usage chunk only when asked', async () => {
    const read = async (body: Record<string, unknown>) => {
      const res = await post('/v1/chat/completions', {
        model: 'org/fixed',
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
        ...body,
      });
      const text = await res.text();
      return text
        .split('\n\n')
        .filter((e) => e.startsWith('data: ') && !e.includes('[DONE]'))
        .map(
          (e) => JSON.parse(e.slice(6)) as { choices: { finish_reason: string | null }[]; usage?: unknown },
        );
    };
    const plain = await read({});
    expect(plain.flatMap((c) => c.choices.map((x) => x.finish_reason)).filter(Boolean)).toEqual(['stop']);
    expect(plain.some((c) => c.usage)).toBe(false);
    const withUsage = await read({ stream_options: { include_usage: true } });
    expect(withUsage.flatMap((c) => c.choices.map((x) => x.finish_reason)).filter(Boolean)).toEqual(['stop']);
    expect(withUsage.at(-1)).toMatchObject({ choices: [], usage: { completion_tokens: 3 } });
  });

  test('behavior: a models fallback list serves the first model a live node can take', async () => {
    const res = await post('/v1/chat/completions', {
      model: 'not-served',
      models: ['also-not-served', 'org/fixed'],
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { model: string }).model).toBe('org/fixed');
    const none = await post('/v1/chat/completions', {
      model: 'not-served',
      models: ['also-not-served'],
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(none.status).toBe(404);
  });

  test('error: options we cannot honour or that are out of range are 400 naming them, never dropped', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ presence_penalty: 5 }, 'presence_penalty'],
      [{ frequency_penalty: -3 }, 'frequency_penalty'],
      [{ n: 5 }, 'n'],
      [{ top_logprobs: 21 }, 'top_logprobs'],
      [{ provider: { data_collection: 'never' } }, 'provider'],
      [{ provider: { sort: 'random' } }, 'provider.sort'],
      [{ models: [] }, 'models'],
    ];
    for (const [extra, param] of cases) {
      const res = await post('/v1/chat/completions', {
        model: 'org/fixed',
        messages: [{ role: 'user', content: 'hi' }],
        ...extra,
      });
      expect(res.status, JSON.stringify(extra)).toBe(400);
      const body = (await res.json()) as { error: { param: string | null } };
      expect(body.error.param ?? '', JSON.stringify(extra)).toContain(param);
    }
  });

  test('behavior: provider.only and ignore route by node address in any case', async () => {
    const nodeId = daemon.nodeId;
    const only = await post('/v1/chat/completions', {
      model: 'org/fixed',
      messages: [{ role: 'user', content: 'hi' }],
      provider: { only: [nodeId.toUpperCase().replace('0X', '0x')] },
    });
    expect(only.status).toBe(200);
    expect(only.headers.get('x-gpumesh-node')).toBe(nodeId);
    const ignored = await post('/v1/chat/completions', {
      model: 'org/fixed',
      messages: [{ role: 'user', content: 'hi' }],
      provider: { ignore: [nodeId.toLowerCase()] },
    });
    expect(ignored.status).toBe(503);
    expect(((await ignored.json()) as { error: { message: string } }).error.message).toContain(
      'provider_ignore',
    );
  });

  test('behavior: a burst past the node’s slots waits its turn instead of failing; a lone key is not starved', async () => {
    const body = { model: 'org/fixed', messages: [{ role: 'user', content: 'hi' }], max_tokens: 8 };
    const streams = await Promise.all(
      Array.from({ length: 20 }, () => post('/v1/chat/completions', { ...body, stream: true })),
    );
    expect(streams.map((r) => r.status)).toEqual(Array(20).fill(200));
    await Promise.all(streams.map((r) => r.text()));
    // One key's burst of 500 slow jobs, then another key's single request. The queue takes turns
    // by key (and past half of it one key holds at most a quarter: the rest of the burst is refused
    // with 503, Retry-After), so once in line the lone request waits for the jobs running then (at
    // most the node's 8 slots) and at most one more turn, not for the ~128 burst jobs ahead of it.
    const lone = await newKey({ name: 'lone' });
    const slow = { ...body, max_tokens: SLOW_JOB_TOKENS };
    const served: string[] = [];
    const burst = Array.from({ length: 500 }, (_, i) =>
      post('/v1/chat/completions', slow).then((r) => {
        if (r.status === 200) served.push(`burst${i}`);
        return r.status;
      }),
    );
    await vi.waitFor(
      () => {
        if (t.app.router.queue.waiting('org/fixed') < 100) throw new Error('the burst is not queued yet');
      },
      { timeout: 20_000, interval: 5 },
    );
    let servedBefore = -1;
    const single = post('/v1/chat/completions', slow, lone.key).then((r) => {
      if (r.status === 200) served.push('lone');
      return r.status;
    });
    const queue = t.app.router.queue;
    await vi.waitFor(
      () => {
        if (queue.waitingFor('org/fixed', lone.id) === 0)
          throw new Error('the lone request is not in line yet');
        servedBefore = served.length;
      },
      { timeout: 20_000, interval: 1 },
    );
    const waitingAhead = queue.waiting('org/fixed') - 1;
    const statuses = await Promise.all(burst);
    expect(await single).toBe(200);
    expect(new Set(statuses)).toEqual(new Set([200, 503]));
    expect(waitingAhead).toBeGreaterThanOrEqual(64);
    expect(served.indexOf('lone') - servedBefore).toBeLessThanOrEqual(2 * 8);
  }, 60_000);

  test('edge: embeddings take up to 2,048 inputs; empty input and more inputs are 400 naming input', async () => {
    const inputs = Array.from({ length: 1_000 }, (_, i) => `text ${i}`);
    const many = await client.embeddings.create({ model: 'embed', input: inputs });
    expect(many.data).toHaveLength(1_000);
    for (const input of ['', [''], Array.from({ length: 2_049 }, () => 'x')]) {
      const res = await post('/v1/embeddings', { model: 'embed', input });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { param: string } }).error.param).toMatch(/^input/);
    }
  });
  test('behavior: a model whose nodes are all gone is a retryable 503; a model never offered is 404', async () => {
    await daemon.shutdown();
    await vi.waitFor(
      () => {
        if (t.app.hub.index.hasModel('org/fixed')) throw new Error('the node is still indexed');
      },
      { timeout: 10_000, interval: 20 },
    );
    const gone = await post('/v1/chat/completions', {
      model: 'org/fixed',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(gone.status).toBe(503);
    expect(gone.headers.get('retry-after')).toBe('5');
    expect(((await gone.json()) as { error: { code: string } }).error.code).toBe('no_provider_available');
    const never = await post('/v1/chat/completions', {
      model: 'never-offered',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(never.status).toBe(404);
  });
});
