/**
 * A coordinator (the first test backend) listening on a free port, with one real gpumesh-node
 * daemon process serving the generated tiny model; resolves once its chat model is routable.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { writeTinyModel } from '@gpumesh/node';
import { type SpawnedNodeDaemon, spawnNodeDaemon } from '@gpumesh/node/testing';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../coordinator/src/app.js';
import { loadConfig } from '../../coordinator/src/config.js';
import { HUB_PATH } from '../../coordinator/src/hub/hub-plugin.js';
import { expectBooksBalanced } from '../../coordinator/src/testing/expect-books-balanced.js';
import { type TestDatabase, testBackends } from '../../coordinator/src/testing/test-backends.js';

export type TinyNodeNetwork = {
  app: FastifyInstance;
  /** The coordinator's http://127.0.0.1:<port>. */
  base: string;
  /** The node's chat model, as the coordinator lists it. */
  model: string;
  /** Stops the node and the coordinator; the books must balance. */
  close(): Promise<void>;
};

export async function startTinyNodeNetwork(label: string): Promise<TinyNodeNetwork> {
  const dir = mkdtempSync(path.join(tmpdir(), `gm-${label}-`));
  let store: TestDatabase | undefined;
  let app: FastifyInstance | undefined;
  let node: SpawnedNodeDaemon | undefined;
  const close = async () => {
    await node?.stop();
    if (app) await expectBooksBalanced(app.ctx);
    await app?.close();
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await writeTinyModel({ path: path.join(dir, 'models', 'tiny.gguf') });
    store = await testBackends()[0]!.open(label);
    const config = loadConfig({
      overrides: {
        dataDir: store.dataDir,
        masterKey: randomBytes(32).toString('hex'),
        logLevel: 'silent',
        rateLimit: { enabled: false },
      },
    });
    const started = await buildApp({ config, store: store.store, logger: false });
    app = started;
    await started.listen({ port: 0, host: '127.0.0.1' });
    const port = (started.server.address() as AddressInfo).port;
    node = spawnNodeDaemon({ coordinator: `ws://127.0.0.1:${port}${HUB_PATH}`, dir });
    for (;;) {
      const chat = [...started.hub.index.models()].find(
        ([, members]) => [...members.values()][0]!.offer.family === 'chat',
      );
      if (chat && started.hub.index.pick({ modelId: chat[0] }).ok)
        return { app: started, base: `http://127.0.0.1:${port}`, model: chat[0], close };
      await new Promise((r) => setTimeout(r, 50));
    }
  } catch (error) {
    await close();
    throw error;
  }
}
