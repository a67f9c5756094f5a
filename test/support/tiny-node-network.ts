/**
 * The "tiny node network" of the end-to-end tests: a coordinator (the first test backend) listening
 * on a free port, and, with startTinyNodeNetwork, one real gpumesh-node daemon process serving the
 * generated tiny model.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { writeTinyModel } from '@gpumesh/node';
import { type SpawnedNodeDaemon, spawnNodeDaemon } from '@gpumesh/node/testing';
import type { FastifyInstance } from 'fastify';
import { type BuildAppOptions, buildApp } from '../../coordinator/src/app.js';
import { loadConfig } from '../../coordinator/src/config.js';
import { HUB_PATH } from '../../coordinator/src/hub/hub-plugin.js';
import { expectBooksBalanced } from '../../coordinator/src/testing/expect-books-balanced.js';
import {
  type TestBackend,
  type TestDatabase,
  testBackends,
} from '../../coordinator/src/testing/test-backends.js';

const NODE_BIN = path.resolve(import.meta.dirname, '../../node/bin/gpumesh-node.js');

/** The node id of the node folder `home` (`gpumesh-node id` on its state folder), as it prints it. */
export async function nodeIdOf(home: string): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, [
    NODE_BIN,
    'id',
    '--json',
    '--state-dir',
    path.join(home, 'state'),
  ]);
  return (JSON.parse(stdout) as { nodeId: string }).nodeId;
}

export type TestCoordinator = {
  app: FastifyInstance;
  store: TestDatabase;
  /** The coordinator's http://127.0.0.1:<port>. */
  base: string;
  port: number;
  /** Closes the coordinator (the books must balance) and its database. */
  close(): Promise<void>;
};

export type TestCoordinatorOptions = {
  /** Config overrides beside the test ones (data dir, a fresh master key, silent, no rate limit). */
  overrides?: Record<string, unknown>;
  tierOf?: BuildAppOptions['tierOf'];
  /** The database (testBackends()); default the first, SQLite. */
  backend?: TestBackend;
};

/** A coordinator on a fresh test database (labelled `label`), listening on a free port. */
export async function startCoordinator(
  label: string,
  options: TestCoordinatorOptions = {},
): Promise<TestCoordinator> {
  const store = await (options.backend ?? testBackends()[0]!).open(label);
  let app: FastifyInstance | undefined;
  const close = async () => {
    if (app) await expectBooksBalanced(app.ctx);
    await app?.close();
    await store.close();
  };
  try {
    const config = loadConfig({
      overrides: {
        dataDir: store.dataDir,
        masterKey: randomBytes(32).toString('hex'),
        logLevel: 'silent',
        rateLimit: { enabled: false },
        ...options.overrides,
      },
    });
    const started = await buildApp({ config, store: store.store, logger: false, tierOf: options.tierOf });
    app = started;
    await started.listen({ port: 0, host: '127.0.0.1' });
    const port = (started.server.address() as AddressInfo).port;
    return { app: started, store, base: `http://127.0.0.1:${port}`, port, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** The id of a model of `family` that `app`'s hub lists (its first), if any. */
export function servedModel(app: FastifyInstance, family: 'chat' | 'embedding'): string | undefined {
  return [...app.hub.index.models()].find(
    ([, members]) => [...members.values()][0]!.offer.family === family,
  )?.[0];
}

export type TinyNodeNetwork = TestCoordinator & {
  /** The node's chat model, as the coordinator lists it. */
  model: string;
  /** The node's embedding model (with `embeddings: true`). */
  embedModel: string | undefined;
  /** Stops the node and the coordinator; the books must balance. */
  close(): Promise<void>;
};

export type TinyNodeNetworkOptions = Pick<TestCoordinatorOptions, 'tierOf'> & {
  /** The node offers embeddings too (`--offer-embeddings true`); resolves once both are listed. */
  embeddings?: boolean;
  /** A GGUF file the node serves instead of the generated tiny model (e.g. gpumesh/mini-chat's). */
  modelFile?: string;
};

/**
 * A coordinator with one node daemon on the tiny model (or `modelFile`); resolves once its chat
 * model is routable.
 */
export async function startTinyNodeNetwork(
  label: string,
  options: TinyNodeNetworkOptions = {},
): Promise<TinyNodeNetwork> {
  const dir = mkdtempSync(path.join(tmpdir(), `gm-${label}-`));
  let coordinator: TestCoordinator | undefined;
  let node: SpawnedNodeDaemon | undefined;
  const close = async () => {
    await node?.stop();
    await coordinator?.close();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    if (options.modelFile) {
      mkdirSync(path.join(dir, 'models'), { recursive: true });
      copyFileSync(options.modelFile, path.join(dir, 'models', path.basename(options.modelFile)));
    } else await writeTinyModel({ path: path.join(dir, 'models', 'tiny.gguf') });
    coordinator = await startCoordinator(label, { tierOf: options.tierOf });
    const { app, port } = coordinator;
    node = spawnNodeDaemon({
      coordinator: `ws://127.0.0.1:${port}${HUB_PATH}`,
      dir,
      ...(options.embeddings ? { args: ['--offer-embeddings', 'true'] } : {}),
    });
    const end = Date.now() + 60_000;
    for (;;) {
      const model = servedModel(app, 'chat');
      const embedModel = servedModel(app, 'embedding');
      if (model && (embedModel || !options.embeddings) && app.hub.index.pick({ modelId: model }).ok)
        return { ...coordinator, model, embedModel, close };
      if (Date.now() > end) throw new Error('the node did not come online');
      await new Promise((r) => setTimeout(r, 50));
    }
  } catch (error) {
    await close();
    throw error;
  }
}
