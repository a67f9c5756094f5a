/**
 * Strict request semantics on /v1, seen from both ends: what the client gets (400 naming the field
 * for a bad value) and what the node receives (a null is "not given": the field is absent, never
 * another value). A real node daemon in-process on the real hub protocol; its runtime answers a
 * fixed reply and records each request it was given.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Daemon, loadConfig as loadNodeConfig, startDaemon } from '@gpumesh/node';
import { createFixedReplyRuntime } from '@gpumesh/node/testing';
import OpenAI from 'openai';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { isErrorBody } from '../coordinator/src/errors.js';
import { HUB_PATH } from '../coordinator/src/hub/hub-plugin.js';
import { credit } from '../coordinator/src/ledger/credit.js';
import { createTestApp, describeBackends, signIn, type TestApp } from '../coordinator/src/testing/index.js';

const USD = 1_000_000_000n;
const CONTEXT = 64;

describeBackends('strict /v1 input', (backend) => {
  let t: TestApp;
  let daemon: Daemon;
  let key: string;
  let client: OpenAI;
  const seen: Record<string, unknown>[] = [];
  const dir = mkdtempSync(path.join(tmpdir(), 'gm-strict-'));

  beforeAll(async () => {
    t = await createTestApp(backend, { label: 'strict' });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (t.app.server.address() as AddressInfo).port;
    const jwt = await signIn(t.app, privateKeyToAccount(generatePrivateKey()));
    const headers = { authorization: `Bearer ${jwt}` };
    const user = (await t.app.inject({ method: 'GET', url: '/api/user', headers })).json() as { id: string };
    key = (
      (
        await t.app.inject({ method: 'POST', url: '/api/router/keys', headers, payload: { name: 'strict' } })
      ).json() as { key: string }
    ).key;
    await credit(t.db, { userId: user.id, amountNano: 100n * USD, ref: 'strict-seed' });
    const base = createFixedReplyRuntime({
      models: [
        { id: 'fixed', family: 'chat', contextLength: CONTEXT, maxConcurrency: 4 },
        { id: 'embed', family: 'embedding', contextLength: CONTEXT, maxConcurrency: 4 },
      ],
      reply: 'one two',
    });
    const runtime = {
      ...base,
      run: (job: Parameters<typeof base.run>[0]) => {
        seen.push(structuredClone(job.request));
        return base.run(job);
      },
    };
    const config = loadNodeConfig({
      env: {},
      flags: { coordinator: `ws://127.0.0.1:${port}${HUB_PATH}`, 'state-dir': dir, 'health-port': '0' },
    });
    daemon = await startDaemon(config, { runtime });
    const deadline = Date.now() + 30_000;
    while (!t.app.hub.index.pick({ modelId: 'fixed' }).ok || !t.app.hub.index.pick({ modelId: 'embed' }).ok) {
      if (Date.now() > deadline) throw new Error('the node did not come online');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    client = new OpenAI({ apiKey: key, baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
  }, 60_000);
  afterAll(async () => {
    await daemon?.shutdown();
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const post = (url: string, payload: Record<string, unknown>) =>
    t.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${key}` }, payload });
  const chat = (extra: Record<string, unknown>) =>
    post('/v1/chat/completions', { model: 'fixed', messages: [{ role: 'user', content: 'hi' }], ...extra });
  const lastSeen = () => seen.at(-1)!;

  test('behavior: null on an optional field is not given — the node receives no such field', async () => {
    const res = await chat({
      temperature: null,
      top_p: null,
      stop: null,
      seed: null,
      max_tokens: null,
      max_completion_tokens: null,
      stream: null,
      user: null,
      logit_bias: null,
    });
    expect(res.statusCode, res.body).toBe(200);
    const request = lastSeen();
    for (const field of ['temperature', 'top_p', 'stop', 'seed', 'stream', 'user', 'logit_bias']) {
      expect(request, field).not.toHaveProperty(field);
    }
    // No limit given: the model's context bounds the answer, as without the field.
    expect(request.max_tokens).toBe(CONTEXT);
  });

  test('error: max_tokens must be an integer ≥ 1 — 0, false, "", "5", 1.5, -1 are 400 naming it', async () => {
    const before = seen.length;
    for (const value of [0, false, '', '5', 1.5, -1, [4], {}]) {
      const res = await chat({ max_tokens: value });
      expect(res.statusCode, JSON.stringify(value)).toBe(400);
      expect(isErrorBody(res.json())).toBe(true);
      expect(res.json().error).toMatchObject({ code: 'invalid_request', param: 'max_tokens' });
    }
    const res = await chat({ max_completion_tokens: 0 });
    expect(res.json().error).toMatchObject({ code: 'invalid_request', param: 'max_completion_tokens' });
    const over = await chat({ max_completion_tokens: 1_000_000 });
    expect(over.json().error).toMatchObject({ code: 'invalid_request', param: 'max_completion_tokens' });
    expect(seen.length).toBe(before);
  });

  test('error: no other type is coerced — temperature "0.5", stream "true", n "1" are 400', async () => {
    for (const [field, value] of [
      ['temperature', '0.5'],
      ['temperature', false],
      ['stream', 'true'],
      ['n', '1'],
      ['seed', 1e300],
    ] as const) {
      const res = await chat({ [field]: value });
      expect(res.statusCode, `${field}=${JSON.stringify(value)}`).toBe(400);
      expect(res.json().error.param).toBe(field);
    }
  });

  test('default: single- and multi-part text content arrays are accepted, as OpenAI does', async () => {
    const single = await chat({ messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] });
    expect(single.statusCode, single.body).toBe(200);
    expect((lastSeen().messages as { content: unknown }[])[0]!.content).toEqual([
      { type: 'text', text: 'hi' },
    ]);
    const multi = await client.chat.completions.create({
      model: 'fixed',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'one' },
            { type: 'text', text: 'two' },
          ],
        },
      ],
      max_tokens: 2,
    });
    expect(multi.choices[0]!.message.content).toBe('one two');
    const bad = await chat({ messages: [{ role: 'user', content: [{ type: 'text', text: 1 }] }] });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.param).toMatch(/^messages\.0\.content/);
  });

  test('default: a one-element prompt array reaches the node as the string', async () => {
    const res = await post('/v1/completions', { model: 'fixed', prompt: ['hello'], max_tokens: 2 });
    expect(res.statusCode, res.body).toBe(200);
    expect(lastSeen().prompt).toBe('hello');
  });

  test('error: provider.max_price out of range is 400 naming the field, never a 500', async () => {
    for (const value of [1e21, 1e308, '1'.repeat(38), '10000000000000']) {
      const res = await chat({ provider: { max_price: { prompt: value } } });
      expect(res.statusCode, String(value)).toBe(400);
      expect(res.json().error).toMatchObject({ code: 'invalid_request', param: 'provider.max_price.prompt' });
    }
    const completion = await post('/v1/embeddings', {
      model: 'embed',
      input: 'x',
      provider: { max_price: { completion: 1e22 } },
    });
    expect(completion.json().error).toMatchObject({ param: 'provider.max_price.completion' });
    // null is no limit; a generous limit still routes.
    const ok = await chat({ provider: { max_price: { prompt: null, completion: '1000' } } });
    expect(ok.statusCode, ok.body).toBe(200);
  });

  test('default: the openai SDK still works on every /v1 route', async () => {
    const models = await client.models.list();
    expect(models.data.map((m) => m.id).sort()).toEqual(['embed', 'fixed']);
    const answer = await client.chat.completions.create({
      model: 'fixed',
      messages: [{ role: 'user', content: 'hi' }],
      temperature: 0.2,
      max_completion_tokens: 3,
    });
    expect(answer.choices[0]!.message.content).toBe('one two');
    expect(lastSeen().temperature).toBe(0.2);
    const stream = await client.chat.completions.create({
      model: 'fixed',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe('one two');
    const completion = await client.completions.create({ model: 'fixed', prompt: 'hi', max_tokens: 2 });
    expect(completion.choices[0]!.text).toBe('one two');
    const embedding = await client.embeddings.create({ model: 'embed', input: ['a', 'b'] });
    expect(embedding.data).toHaveLength(2);
  });
});
