/**
 * Our coordinator passes the protocol's conformance kit in `coordinator` mode: the kit plays nodes
 * against the real app (hub on /node), and drives jobs through /v1 with a real sk- key.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { runCoordinatorConformance, type TriggerInference } from '@gpumesh/protocol/conformance';
import type { FastifyInstance } from 'fastify';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildApp } from '../coordinator/src/app.js';
import { loadConfig } from '../coordinator/src/config.js';
import { FRAME_SCHEMA_PATH, HUB_PATH } from '../coordinator/src/hub/hub-plugin.js';
import { credit } from '../coordinator/src/ledger/credit.js';
import { signIn } from '../coordinator/src/testing/sign-in.js';
import { type TestDatabase, testBackends } from '../coordinator/src/testing/test-backends.js';

let store: TestDatabase;
let app: FastifyInstance;
let port: number;
let apiKey: string;

beforeAll(async () => {
  store = await testBackends()[0]!.open('conformance');
  const config = loadConfig({
    overrides: {
      dataDir: store.dataDir,
      masterKey: randomBytes(32).toString('hex'),
      logLevel: 'silent',
      rateLimit: { enabled: false },
      router: { heartbeatIntervalMs: 500 },
    },
  });
  app = await buildApp({ config, store: store.store, logger: false });
  await app.listen({ port: 0, host: '127.0.0.1' });
  port = (app.server.address() as AddressInfo).port;
  const jwt = await signIn(app, privateKeyToAccount(generatePrivateKey()));
  const auth = { authorization: `Bearer ${jwt}` };
  apiKey = (
    await app.inject({ method: 'POST', url: '/api/router/keys', headers: auth, payload: { name: 'kit' } })
  ).json().key;
  const user = (await app.inject({ method: 'GET', url: '/api/user', headers: auth })).json() as {
    id: string;
  };
  await credit(store.db, { userId: user.id, amountNano: 1_000_000_000n, ref: 'kit' });
});

/** Sends the kit's requests through /v1 as any OpenAI client would. */
function trigger(base: string, key: string): TriggerInference {
  return async ({ kind, body }) => {
    const response = await fetch(`${base}${kind === 'embedding' ? '/embeddings' : '/chat/completions'}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`HTTP ${response.status}: ${text.slice(0, 300)}`);
    return text;
  };
}

afterAll(async () => {
  await app?.close();
  await store?.close();
});

describe('gpumesh-conformance coordinator', () => {
  test('default: every scenario passes against our coordinator', async () => {
    const report = await runCoordinatorConformance({
      url: `ws://127.0.0.1:${port}${HUB_PATH}`,
      trigger: trigger(`http://127.0.0.1:${port}/v1`, apiKey),
    });
    const failed = report.results.filter((r) => r.status !== 'pass');
    expect(failed, JSON.stringify(failed, null, 2)).toEqual([]);
    expect(report.results.length).toBeGreaterThanOrEqual(20);
  }, 120_000);

  test('behavior: the frame JSON Schemas are served at their stable path, the same as the package’s file', async () => {
    const response = await fetch(`http://127.0.0.1:${port}${FRAME_SCHEMA_PATH}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/schema\+json/);
    const file = new URL('../protocol/schema/frames.schema.json', import.meta.url);
    expect(await response.json()).toEqual(JSON.parse(readFileSync(file, 'utf8')));
  });
});
