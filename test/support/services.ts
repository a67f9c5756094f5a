/**
 * The real services tests use: PostgreSQL and Redis on this machine. No mocks of either.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';

export const DEFAULT_TEST_PG_URL = 'postgres://postgres@127.0.0.1:5432/test';
export const DEFAULT_TEST_REDIS_URL = 'redis://127.0.0.1:6379';
const PROBE_TIMEOUT_MS = 2_000;

/** Probes each service once; returns its URL when it answers, null when it does not. */
export async function probeServices(): Promise<{ postgres: string | null; redis: string | null }> {
  const pgUrl = process.env.GPUMESH_TEST_PG_URL || DEFAULT_TEST_PG_URL;
  const redisUrl = process.env.GPUMESH_TEST_REDIS_URL || DEFAULT_TEST_REDIS_URL;
  const [postgres, redis] = await Promise.all([
    (async () => {
      const client = new pg.Client({ connectionString: pgUrl, connectionTimeoutMillis: PROBE_TIMEOUT_MS });
      try {
        await client.connect();
        await client.query('select 1');
        return pgUrl;
      } catch {
        return null;
      } finally {
        await client.end().catch(() => {});
      }
    })(),
    (async () => {
      const client = new Redis(redisUrl, {
        lazyConnect: true,
        connectTimeout: PROBE_TIMEOUT_MS,
        maxRetriesPerRequest: 0,
        retryStrategy: () => null,
      });
      client.on('error', () => {}); // the outcome is read from connect(); no unhandled-event noise
      try {
        await client.connect();
        await client.ping();
        return redisUrl;
      } catch {
        return null;
      } finally {
        client.disconnect();
      }
    })(),
  ]);
  return { postgres, redis };
}

/** PostgreSQL URL for tests, or undefined when the service is absent (tests then skip). */
export function testPgUrl(): string | undefined {
  return process.env.GPUMESH_TEST_PG_URL || undefined;
}

/** Redis URL for tests, or undefined when the service is absent (tests then skip). */
export function testRedisUrl(): string | undefined {
  return process.env.GPUMESH_TEST_REDIS_URL || undefined;
}

/**
 * Creates a fresh PostgreSQL schema for one test file, so runs sharing the database never see each
 * other's rows. Returns its name and a drop function for afterAll.
 */
export async function createTestSchema(
  pgUrl: string,
  label = 't',
): Promise<{ schema: string; drop: () => Promise<void> }> {
  const schema = `gm_${label
    .replace(/[^a-z0-9]/gi, '')
    .toLowerCase()
    .slice(0, 20)}_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: pgUrl });
  await client.connect();
  try {
    await client.query(`create schema "${schema}"`);
  } finally {
    await client.end();
  }
  return {
    schema,
    drop: async () => {
      const c = new pg.Client({ connectionString: pgUrl });
      await c.connect();
      try {
        await c.query(`drop schema if exists "${schema}" cascade`);
      } finally {
        await c.end();
      }
    },
  };
}
