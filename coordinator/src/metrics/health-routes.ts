import type {} from '@fastify/swagger'; // types of `schema.hide` and `summary`
import type { FastifyInstance } from 'fastify';
import { type QueryExecutorProvider, sql } from 'kysely';

/** How long /readyz waits for the database before it calls it unreachable. */
export const DEFAULT_READY_TIMEOUT_MS = 2_000;

export type HealthRoutesOptions = {
  /** The coordinator's database (any Kysely instance). */
  readonly db: QueryExecutorProvider;
  readonly readyTimeoutMs?: number;
};

/**
 * `GET /healthz`: the process is alive and serving HTTP (200 always).
 * `GET /readyz`: the database answers `select 1` within the timeout (200), else 503. While the app
 * closes, Fastify itself answers 503 to new requests, so load balancers stop routing here first.
 */
export async function healthRoutes(app: FastifyInstance, options: HealthRoutesOptions): Promise<void> {
  const timeoutMs = options.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS;

  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));

  app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    if (await databaseAnswers(options.db, timeoutMs)) return { status: 'ready', checks: { database: 'ok' } };
    reply.code(503).header('retry-after', '5');
    return {
      error: {
        message: 'The coordinator is not ready: its database does not answer.',
        type: 'service_unavailable',
        code: 'not_ready',
        param: null,
      },
    };
  });
}

async function databaseAnswers(db: QueryExecutorProvider, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  try {
    return await Promise.race([
      sql`select 1`.execute(db).then(
        () => true,
        () => false,
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
