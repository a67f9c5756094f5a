import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { buildApp } from '../app.js';
import { type CoordinatorConfig, loadConfig } from '../config.js';
import type { Database } from '../db/schema.js';
import type { Ledger } from '../ledger/ledger.js';
import type { TestBackend, TestDatabase } from './test-backends.js';
import { createTestClock, type TestClock } from './test-clock.js';

export type TestApp = {
  app: FastifyInstance;
  db: Kysely<Database>;
  /** The app's ledger (app.ctx.ledger). */
  ledger: Ledger;
  config: CoordinatorConfig;
  clock: TestClock;
  store: TestDatabase;
  /** Closes the app and the database (and drops the schema / temp dir). */
  close(): Promise<void>;
};

/**
 * A ready coordinator app on a fresh database of `backend`, with a manual clock, logging off and
 * rate limits off unless `overrides` turn them on. `overrides` is a partial config (any field).
 */
export async function createTestApp(
  backend: TestBackend,
  options: { label?: string; overrides?: Record<string, unknown>; clock?: TestClock } = {},
): Promise<TestApp> {
  const store = await backend.open(options.label);
  const config = loadConfig({
    overrides: {
      dataDir: store.dataDir,
      databaseUrl: store.databaseUrl,
      databaseSchema: store.databaseSchema,
      masterKey: randomBytes(32).toString('hex'),
      publicUrl: 'http://gpumesh.test',
      logLevel: 'silent',
      ...options.overrides,
      rateLimit: { enabled: false, ...(options.overrides?.rateLimit as object | undefined) },
    },
  });
  const clock = options.clock ?? createTestClock();
  const app = await buildApp({ config, store: store.store, clock, logger: false });
  await app.ready();
  return {
    app,
    db: store.db,
    ledger: app.ctx.ledger,
    config,
    clock,
    store,
    async close() {
      await app.close();
      await store.close();
    },
  };
}
