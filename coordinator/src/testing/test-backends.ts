import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Kysely } from 'kysely';
import { createTestSchema, testPgUrl } from '../../../test/support/services.js';
import { migrate } from '../db/migrate.js';
import type { Database } from '../db/schema.js';
import { openStore, type Store } from '../db/store.js';

/** An open, migrated test database and where it lives (to build a config for the same store). */
export type TestDatabase = {
  /** The open store (pass it to buildApp). */
  store: Store;
  /** store.db */
  db: Kysely<Database>;
  /** A fresh temporary data directory (SQLite file, master key). */
  dataDir: string;
  /** Set for PostgreSQL. */
  databaseUrl?: string;
  databaseSchema?: string;
  /** Closes the database and removes the directory / drops the schema. */
  close(): Promise<void>;
};

export type TestBackend = {
  name: 'sqlite' | 'postgres';
  /** True when this backend is unavailable here (PostgreSQL absent; CI makes it mandatory). */
  skip: boolean;
  /** Opens a fresh, migrated database: a temp SQLite file, or a new PostgreSQL schema. */
  open(label?: string): Promise<TestDatabase>;
};

/**
 * The two storage backends, for running one suite on both:
 * `describe.each(testBackends())('$name', (backend) => …)` with `describe.skipIf(backend.skip)`
 * inside, or simply `describeBackends` from ./describe-backends.js.
 */
export function testBackends(): TestBackend[] {
  const pgUrl = testPgUrl();
  return [
    {
      name: 'sqlite',
      skip: false,
      async open() {
        const dataDir = mkdtempSync(path.join(tmpdir(), 'gm-test-'));
        const store = openStore({ sqlitePath: path.join(dataDir, 'gpumesh.db') });
        await migrate(store.db);
        return {
          store,
          db: store.db,
          dataDir,
          async close() {
            await store.close();
            // A file written as the store closes (a WAL checkpoint) can race the removal: retried.
            rmSync(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
          },
        };
      },
    },
    {
      name: 'postgres',
      skip: !pgUrl,
      async open(label = 't') {
        if (!pgUrl) throw new Error('PostgreSQL is not available');
        const dataDir = mkdtempSync(path.join(tmpdir(), 'gm-test-'));
        const { schema, drop } = await createTestSchema(pgUrl, label);
        const store = openStore({ pgUrl, schema });
        await migrate(store.db);
        return {
          store,
          db: store.db,
          dataDir,
          databaseUrl: pgUrl,
          databaseSchema: schema,
          async close() {
            await store.close();
            await drop();
            // A file written as the store closes (a WAL checkpoint) can race the removal: retried.
            rmSync(dataDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
          },
        };
      },
    },
  ];
}
