import type {} from '@fastify/rate-limit'; // types of `config.rateLimit`
import type {} from '@fastify/swagger'; // types of `schema.hide`
import type { FastifyInstance } from 'fastify';
import { type QueryExecutorProvider, sql } from 'kysely';
import { ApiError } from '../errors.js';

/** How long /readyz waits for the database before it calls it unreachable. */
export const DEFAULT_READY_TIMEOUT_MS = 2_000;

/** Retry-After of a 503 from /readyz, in seconds. */
const NOT_READY_RETRY_AFTER_S = 5;

export type HealthRoutesOptions = {
  /** The coordinator's database (any Kysely instance). */
  readonly db: QueryExecutorProvider;
  readonly readyTimeoutMs?: number;
};

/**
 * `GET /healthz`: the process is alive and serving HTTP (200 always).
 * `GET /readyz`: the database answers `select 1` within the timeout (200), else 503 `not_ready`.
 * Once the app closes it accepts no new connection (Fastify also drops idle keep-alive ones and
 * answers 503 on busy ones), so a load balancer stops routing here while in-flight requests finish.
 * Probes skip the rate limits.
 */
export async function healthRoutes(app: FastifyInstance, options: HealthRoutesOptions): Promise<void> {
  const timeoutMs = options.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS;
  const routeOptions = { schema: { hide: true }, config: { rateLimit: false } } as const;

  app.get('/healthz', routeOptions, async () => ({ status: 'ok' }));

  app.get('/readyz', routeOptions, async () => {
    if (!(await databaseAnswers(options.db, timeoutMs))) {
      throw new ApiError('not_ready', 'The coordinator is not ready: its database does not answer.', {
        retryAfterS: NOT_READY_RETRY_AFTER_S,
      });
    }
    return { status: 'ready', checks: { database: 'ok' } };
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
