/**
 * A node the coordinator refuses for good — its owner proof signed by another wallet — stops
 * instead of reconnecting forever, and says why: the real daemon (in this process, on the
 * fixed-reply runtime) against a real coordinator.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig as loadNodeConfig, loadNodeIdentity, startDaemon } from '@gpumesh/node';
import { createFixedReplyRuntime } from '@gpumesh/node/testing';
import { ownerProofText } from '@gpumesh/protocol';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { HUB_PATH } from '../coordinator/src/hub/hub-plugin.js';
import { createTestApp, type TestApp, testBackends } from '../coordinator/src/testing/index.js';

const sqlite = testBackends().find((b) => b.name === 'sqlite')!;

describe('a node refused by the coordinator', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'gm-refused-'));
  let t: TestApp;
  let base: string;

  beforeAll(async () => {
    t = await createTestApp(sqlite, { label: 'refused' });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('error: an owner proof signed by another wallet is auth_failed: the node stops reconnecting and says why', async () => {
    const stateDir = path.join(dir, 'state');
    const { nodeId } = await loadNodeIdentity(path.join(stateDir, 'node.key'));
    const owner = privateKeyToAccount(generatePrivateKey());
    const impostor = privateKeyToAccount(generatePrivateKey());
    const config = loadNodeConfig({
      env: {},
      flags: {
        coordinator: `${base.replace('http', 'ws')}${HUB_PATH}`,
        'state-dir': stateDir,
        'health-port': '0',
        'reconnect-min-ms': '20',
        'owner-address': owner.address,
        'owner-signature': await impostor.signMessage({ message: ownerProofText(nodeId) }),
      },
    });
    const runtime = createFixedReplyRuntime({
      models: [{ id: 'm', family: 'chat', contextLength: 256, maxConcurrency: 1 }],
    });
    const daemon = await startDaemon(config, { runtime });
    try {
      const reason = await Promise.race([
        daemon.refused,
        new Promise<string>((_, reject) =>
          setTimeout(() => reject(new Error('not refused in time')), 10_000),
        ),
      ]);
      expect(reason).toMatch(/owner proof/i);
      // Stopped for good: no session is attempted again.
      await new Promise((r) => setTimeout(r, 300));
      expect(daemon.hub.connected).toBe(false);
      expect(t.app.hub.index.node(nodeId)).toBeUndefined();
    } finally {
      await daemon.shutdown();
    }
  });
});
