import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import Fastify from 'fastify';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { afterAll, describe, expect, test } from 'vitest';
import { testPgUrl } from '../../../test/support/services.js';
import { errorHandler } from '../error-handler.js';
import { healthRoutes } from './health-routes.js';

const dir = mkdtempSync(join(tmpdir(), 'gpumesh-health-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function appWith(db: Kysely<unknown>) {
  const app = Fastify();
  app.setErrorHandler(errorHandler);
  await app.register(healthRoutes, { db, readyTimeoutMs: 1_000 });
  return app;
}

describe('healthRoutes (sqlite)', () => {
  test('default', async () => {
    const db = new Kysely<unknown>({
      dialect: new SqliteDialect({ database: new Database(join(dir, 'a.db')) }),
    });
    const app = await appWith(db);
    const health = await app.inject('/healthz');
    expect(health.statusCode).toBe(200);
    expect(health.json()).toEqual({ status: 'ok' });
    const ready = await app.inject('/readyz');
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: 'ready', checks: { database: 'ok' } });
    await app.close();
    await db.destroy();
  });

  test('error: database closed → /readyz 503, /healthz still 200', async () => {
    const sqlite = new Database(join(dir, 'b.db'));
    const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database: sqlite }) });
    const app = await appWith(db);
    sqlite.close();
    const ready = await app.inject('/readyz');
    expect(ready.statusCode).toBe(503);
    expect(ready.headers['retry-after']).toBe('5');
    expect(ready.json()).toEqual({
      error: {
        message: 'The coordinator is not ready: its database does not answer.',
        type: 'api_error',
        code: 'not_ready',
        param: null,
      },
    });
    expect((await app.inject('/healthz')).statusCode).toBe(200);
    await app.close();
  });
});

describe.skipIf(!testPgUrl())('healthRoutes (postgres)', () => {
  test('default', async () => {
    const db = new Kysely<unknown>({
      dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: testPgUrl(), max: 1 }) }),
    });
    const app = await appWith(db);
    expect((await app.inject('/readyz')).statusCode).toBe(200);
    await app.close();
    await db.destroy();
  });

  test('error: database unreachable → 503', async () => {
    // Nothing listens on port 1: the pool's connect fails at once.
    const db = new Kysely<unknown>({
      dialect: new PostgresDialect({
        pool: new pg.Pool({ connectionString: 'postgres://postgres@127.0.0.1:1/test', max: 1 }),
      }),
    });
    const app = await appWith(db);
    expect((await app.inject('/readyz')).statusCode).toBe(503);
    await app.close();
    await db.destroy();
  });
});
