import { randomBytes } from 'node:crypto';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { testRedisUrl } from '../../../test/support/services.js';
import { buildApp } from '../app.js';
import { DEFAULT_RATE_LIMIT_FAILED_CREDENTIAL_MAX, DEFAULT_RATE_LIMIT_WINDOW_MS } from '../config.js';
import { isErrorBody } from '../errors.js';
import { createTestApp, describeBackends, signIn, type TestApp, testBackends } from '../testing/index.js';

const MAX = DEFAULT_RATE_LIMIT_FAILED_CREDENTIAL_MAX;
const randomKey = () => `sk-${randomBytes(30).toString('base64url')}`;
const garbageJwt = () =>
  `${randomBytes(12).toString('base64url')}.${randomBytes(24).toString('base64url')}.${randomBytes(32).toString('base64url')}`;

/** Sends `n` requests and returns the status codes in order. */
async function flood(send: () => Promise<{ statusCode: number }>, n: number): Promise<number[]> {
  const codes: number[] = [];
  for (let i = 0; i < n; i++) codes.push((await send()).statusCode);
  return codes;
}

const expected = (n: number) => [...Array(MAX).fill(401), ...Array(n - MAX).fill(429)];

describeBackends('failed credentials are limited per IP before authentication', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(backend, { label: 'failcred', overrides: { rateLimit: { enabled: true } } });
  });
  afterAll(async () => {
    await t?.close();
  });

  test('default: 500 random sk- keys from one IP are 401 up to the documented limit, then 429', async () => {
    const ip = '10.7.0.1';
    const send = () =>
      t.app.inject({
        method: 'POST',
        url: '/v1/chat/completions',
        remoteAddress: ip,
        headers: { authorization: `Bearer ${randomKey()}` },
        payload: { model: 'm', messages: [{ role: 'user', content: 'hi' }] },
      });
    expect(await flood(send, 500)).toEqual(expected(500));
    const limited = await send();
    expect(isErrorBody(limited.json())).toBe(true);
    expect(limited.json().error).toMatchObject({
      code: 'rate_limited',
      type: 'rate_limit_error',
      param: null,
    });
    const retryAfter = Number(limited.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(DEFAULT_RATE_LIMIT_WINDOW_MS / 1000);
  });

  test('default: 500 garbage JWTs on /api/user, the same', async () => {
    const send = () =>
      t.app.inject({
        method: 'GET',
        url: '/api/user',
        remoteAddress: '10.7.0.2',
        headers: { authorization: `Bearer ${garbageJwt()}` },
      });
    expect(await flood(send, 500)).toEqual(expected(500));
  });

  test('behavior: once over, a valid credential from that IP waits for the window; other IPs do not', async () => {
    const ip = '10.7.0.3';
    const token = await signIn(t.app, privateKeyToAccount(generatePrivateKey()));
    const user = (from: string, bearer: string) =>
      t.app.inject({
        method: 'GET',
        url: '/api/user',
        remoteAddress: from,
        headers: { authorization: bearer },
      });
    expect((await user(ip, `Bearer ${token}`)).statusCode).toBe(200);
    expect(await flood(() => user(ip, `Bearer ${garbageJwt()}`), MAX + 1)).toEqual(expected(MAX + 1));
    expect((await user(ip, `Bearer ${token}`)).statusCode).toBe(429);
    expect((await user('10.7.0.4', `Bearer ${token}`)).statusCode).toBe(200);
    // Requests without a credential are not refused by this budget.
    expect((await t.app.inject({ method: 'GET', url: '/api/skills', remoteAddress: ip })).statusCode).toBe(
      200,
    );
    t.clock.advance(DEFAULT_RATE_LIMIT_WINDOW_MS);
    expect((await user(ip, `Bearer ${token}`)).statusCode).toBe(200);
  });

  test('default: /api/skills documents the number', async () => {
    const skills = (await t.app.inject({ method: 'GET', url: '/api/skills.json' })).json();
    expect(skills.limits.failedCredentialsPerIp).toBe(MAX);
  });
});

describe.skipIf(!testRedisUrl())('failed credentials on Redis', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(testBackends()[0]!, {
      label: 'failcredredis',
      overrides: {
        redisUrl: testRedisUrl(),
        rateLimit: { enabled: true, namespace: `gm-test-${randomBytes(6).toString('hex')}:` },
      },
    });
  });
  afterAll(async () => {
    await t?.close();
  });

  test('default: two replicas share one budget', async () => {
    const replica = await buildApp({
      config: t.config,
      store: t.store.store,
      clock: t.clock,
      keyring: t.app.ctx.keyring,
      logger: false,
    });
    try {
      const apps = [t.app, replica];
      let i = 0;
      const send = () =>
        apps[i++ % 2]!.inject({
          method: 'GET',
          url: '/v1/models',
          remoteAddress: '10.8.0.1',
          headers: { authorization: `Bearer ${randomKey()}` },
        });
      expect(await flood(send, 200)).toEqual(expected(200));
      const limited = await send();
      expect(limited.json().error.code).toBe('rate_limited');
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    } finally {
      await replica.close();
    }
  });
});
