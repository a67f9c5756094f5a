import { randomBytes } from 'node:crypto';
import type { InjectOptions } from 'fastify';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { testRedisUrl } from '../../test/support/services.js';
import { buildApp } from './app.js';
import { isErrorBody } from './errors.js';
import { createTestApp, describeBackends, signIn, type TestApp, testBackends } from './testing/index.js';

const ADDRESS = `0x${'ab'.repeat(20)}`;

describeBackends('buildApp', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(backend, { label: 'app', overrides: { bodyLimitBytes: 4096 } });
  });
  afterAll(async () => {
    await t?.close();
  });

  test('default: security headers and CORS for browser wallets', async () => {
    const res = await t.app.inject({ method: 'GET', url: `/api/auth/nonce?address=${ADDRESS}` });
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['x-frame-options']).toBeDefined();
    expect(res.headers['strict-transport-security']).toBeDefined();
    expect(res.headers['content-security-policy']).toBeDefined();
    const preflight = await t.app.inject({
      method: 'OPTIONS',
      url: '/api/auth/verify',
      headers: {
        origin: 'https://wallet.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization,content-type',
      },
    });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('*');
    expect(String(preflight.headers['access-control-allow-headers']).toLowerCase()).toContain(
      'authorization',
    );
    const simple = await t.app.inject({
      method: 'GET',
      url: `/api/auth/nonce?address=${ADDRESS}`,
      headers: { origin: 'https://wallet.example' },
    });
    expect(simple.headers['access-control-allow-origin']).toBe('*');
  });

  test('error: unknown routes, bad JSON, oversized and non-JSON bodies, unknown fields', async () => {
    const cases = [
      { req: { method: 'GET', url: '/nope' }, status: 404, code: 'not_found' },
      { req: { method: 'POST', url: '/api/auth/nonce' }, status: 405, code: 'method_not_allowed' },
      { req: { method: 'GET', url: '/api/nope' }, status: 404, code: 'not_found' },
      {
        req: {
          method: 'POST',
          url: '/api/auth/verify',
          payload: '{"address":',
          headers: { 'content-type': 'application/json' },
        },
        status: 400,
        code: 'invalid_request',
      },
      {
        req: {
          method: 'POST',
          url: '/api/auth/verify',
          payload: JSON.stringify({ message: 'x'.repeat(5000) }),
          headers: { 'content-type': 'application/json' },
        },
        status: 413,
        code: 'payload_too_large',
      },
      {
        req: {
          method: 'POST',
          url: '/api/auth/verify',
          payload: '<a/>',
          headers: { 'content-type': 'application/xml' },
        },
        status: 415,
        code: 'unsupported_media_type',
      },
      {
        req: {
          method: 'POST',
          url: '/api/auth/verify',
          payload: { address: ADDRESS, message: 'm', signature: '0x', extra: 1 },
        },
        status: 400,
        code: 'invalid_request',
      },
      {
        req: { method: 'GET', url: `/api/auth/nonce?address=${ADDRESS}&address=${ADDRESS}` },
        status: 400,
        code: 'invalid_request',
      },
      {
        // Deeper than bodyMaxDepth (64): refused before parsing, even in a field nobody reads.
        req: {
          method: 'POST',
          url: '/api/auth/verify',
          payload: `{"x":${'['.repeat(65)}${']'.repeat(65)}}`,
          headers: { 'content-type': 'application/json; charset=utf-8' },
        },
        status: 400,
        code: 'invalid_request',
      },
      {
        // fastify's prototype-poisoning guard still runs behind the depth check.
        req: {
          method: 'POST',
          url: '/api/auth/verify',
          payload: '{"address":"a","message":"m","signature":"0x","__proto__":{"x":1}}',
          headers: { 'content-type': 'application/json' },
        },
        status: 400,
        code: 'invalid_request',
      },
    ] as const;
    for (const c of cases) {
      const res = await t.app.inject(c.req as InjectOptions);
      expect(res.statusCode, JSON.stringify(c.req).slice(0, 80)).toBe(c.status);
      expect(isErrorBody(res.json())).toBe(true);
      expect(res.json()).toMatchObject({ error: { code: c.code } });
      expect(res.body).not.toMatch(/FST_|at .*\.ts/);
    }
    const poisoned = await t.app.inject({
      method: 'POST',
      url: '/api/auth/verify',
      payload: '{"__proto__":{"x":1}}',
      headers: { 'content-type': 'application/json' },
    });
    expect(poisoned.json().error.message).toBe('The body is not valid JSON.');
    const deep = await t.app.inject({
      method: 'POST',
      url: '/api/auth/verify',
      payload: `${'['.repeat(65)}${']'.repeat(65)}`,
      headers: { 'content-type': 'application/json' },
    });
    expect(deep.json().error.message).toBe('JSON nested deeper than 64 levels.');
  });
  test('behavior: query strings and path params declare only strings (nothing is type-coerced)', () => {
    // ajv runs without coerceTypes (bodies must be exact JSON); a numeric or boolean query field
    // would then always fail, so a route that wants one must parse a string pattern itself.
    const offenders: string[] = [];
    for (const route of t.app.ctx.routes) {
      for (const part of ['querystring', 'params', 'headers'] as const) {
        const schema = route.schema?.[part] as
          | { properties?: Record<string, { type?: unknown }> }
          | undefined;
        for (const [name, field] of Object.entries(schema?.properties ?? {})) {
          if (field.type !== 'string') offenders.push(`${route.method} ${route.url} ${part}.${name}`);
        }
      }
    }
    expect(offenders).toEqual([]);
  });
});

describeBackends('rate limits', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(backend, {
      label: 'rl',
      overrides: { rateLimit: { enabled: true, signInMax: 5, userMax: 4, anonymousMax: 3 } },
    });
  });
  afterAll(async () => {
    await t?.close();
  });

  test('default: per IP on sign-in routes, with Retry-After and the common shape', async () => {
    const from = (ip: string) =>
      t.app.inject({ method: 'GET', url: `/api/auth/nonce?address=${ADDRESS}`, remoteAddress: ip });
    for (let i = 0; i < 5; i++) expect((await from('10.0.0.1')).statusCode).toBe(200);
    const limited = await from('10.0.0.1');
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toMatchObject({ error: { code: 'rate_limited', type: 'rate_limit_error' } });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect((await from('10.0.0.2')).statusCode).toBe(200);
  });

  test('behavior: per user elsewhere — two users behind one IP have separate budgets', async () => {
    const ip = '10.0.0.9';
    const tokenA = await signInFrom(t, ip);
    const tokenB = await signInFrom(t, ip);
    const call = (token: string) =>
      t.app.inject({
        method: 'GET',
        url: '/api/user',
        remoteAddress: ip,
        headers: { authorization: `Bearer ${token}` },
      });
    for (let i = 0; i < 4; i++) expect((await call(tokenA)).statusCode).toBe(200);
    expect((await call(tokenA)).statusCode).toBe(429);
    expect((await call(tokenB)).statusCode).toBe(200);
  });

  test('behavior: /v1 without a credential is limited per IP like any anonymous request', async () => {
    const ip = '10.0.0.21';
    const v1 = (method: 'GET' | 'POST', url: string) =>
      t.app.inject({
        method,
        url,
        remoteAddress: ip,
        ...(method === 'POST'
          ? { payload: { model: 'm', messages: [{ role: 'user', content: 'hi' }] } }
          : {}),
      });
    const codes = [
      (await v1('POST', '/v1/chat/completions')).statusCode,
      (await v1('GET', '/v1/models')).statusCode,
      (await v1('POST', '/v1/embeddings')).statusCode,
    ];
    expect(codes.every((code) => code === 400 || code === 401)).toBe(true);
    const limited = await v1('POST', '/v1/chat/completions');
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toMatchObject({ error: { code: 'rate_limited', type: 'rate_limit_error' } });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
  });
});

/** Signs in a fresh wallet, with both sign-in calls coming from `ip`. */
async function signInFrom(t: TestApp, ip: string): Promise<string> {
  const account = privateKeyToAccount(generatePrivateKey());
  const nonce = await t.app.inject({
    method: 'GET',
    url: `/api/auth/nonce?address=${account.address}`,
    remoteAddress: ip,
  });
  const { message } = nonce.json() as { message: string };
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/auth/verify',
    remoteAddress: ip,
    payload: { address: account.address, message, signature: await account.signMessage({ message }) },
  });
  expect(res.statusCode).toBe(200);
  return (res.json() as { token: string }).token;
}

describe.skipIf(!testRedisUrl())('rate limits on Redis', () => {
  const backend = testBackends()[0]!;
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(backend, {
      label: 'rlredis',
      overrides: {
        redisUrl: testRedisUrl(),
        rateLimit: { enabled: true, signInMax: 6, namespace: `gm-test-${randomBytes(6).toString('hex')}:` },
      },
    });
  });
  afterAll(async () => {
    await t?.close();
  });

  test('default: two replicas share one limit', async () => {
    const replica = await buildApp({
      config: t.config,
      store: t.store.store,
      clock: t.clock,
      keyring: t.app.ctx.keyring,
      logger: false,
    });
    try {
      const apps = [t.app, replica];
      const codes: number[] = [];
      for (let i = 0; i < 8; i++) {
        const res = await apps[i % 2]!.inject({
          method: 'GET',
          url: `/api/auth/nonce?address=${ADDRESS}`,
          remoteAddress: '10.1.0.1',
        });
        codes.push(res.statusCode);
      }
      // 6 allowed in total across both replicas, not 6 each
      expect(codes).toEqual([200, 200, 200, 200, 200, 200, 429, 429]);
      expect(await signIn(t.app, privateKeyToAccount(generatePrivateKey()))).toBeTypeOf('string');
    } finally {
      await replica.close();
    }
  });
});
