/**
 * Our coordinator passes the protocol's conformance kit in `coordinator` mode: the kit plays nodes
 * against the real app (hub on /node), and drives jobs through /v1 with a real sk- key.
 */
import { readFileSync } from 'node:fs';
import { runCoordinatorConformance, type TriggerInference } from '@gpumesh/protocol/conformance';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { FRAME_SCHEMA_PATH, HUB_PATH } from '../coordinator/src/hub/hub-plugin.js';
import { newApiClient } from './support/api-client.js';
import { startCoordinator, type TestCoordinator } from './support/tiny-node-network.js';

let coordinator: TestCoordinator;
let port: number;
let apiKey: string;

beforeAll(async () => {
  coordinator = await startCoordinator('conformance', {
    overrides: { router: { heartbeatIntervalMs: 500 } },
  });
  ({ port } = coordinator);
  ({ key: apiKey } = await newApiClient(coordinator.app, {
    keyName: 'kit',
    creditNano: 1_000_000_000n,
    creditRef: 'kit',
  }));
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

afterAll(() => coordinator?.close());

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
