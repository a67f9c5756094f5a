import { createHash } from 'node:crypto';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Redis } from 'ioredis';
import type { AppContext } from '../app-context.js';
import { createFailureCounter } from '../auth/create-failure-counter.js';
import { limitFailedCredentials } from '../auth/limit-failed-credentials.js';
import { bearerToken } from '../auth/require-user.js';
import { verifyToken } from '../auth/verify-token.js';
import { ApiError } from '../errors.js';

/**
 * Rate limits: first a per-IP budget of failed credentials, checked before any credential is
 * (auth/limit-failed-credentials.ts); then per IP on sign-in routes (their route config), per user
 * elsewhere, ahead of any route's own credential check (a refused request counts too) — the key is the JWT's subject when one verifies, the API key's hash for sk- keys, the
 * IP otherwise. On Redis when configured, so every replica counts against the same limits.
 */
export async function registerRateLimit(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const { config } = ctx;
  const redis = config.redisUrl
    ? new Redis(config.redisUrl, { connectTimeout: 1_000, maxRetriesPerRequest: 1, lazyConnect: false })
    : undefined;
  if (redis) {
    redis.on('error', (error) => app.log.warn({ err: error }, 'rate-limit redis error'));
    app.addHook('onClose', async () => {
      await redis.quit().catch(() => redis.disconnect());
    });
  }
  limitFailedCredentials(app, {
    counter: createFailureCounter({
      windowMs: config.rateLimit.windowMs,
      clock: ctx.clock,
      namespace: config.rateLimit.namespace,
      ...(redis ? { redis } : {}),
    }),
    max: config.rateLimit.failedCredentialMax,
  });
  const keyOf = async (request: FastifyRequest): Promise<string> => {
    const token = bearerToken(request);
    if (token?.startsWith('sk-')) return `k:${createHash('sha256').update(token).digest('hex').slice(0, 32)}`;
    if (token) {
      const claims = await verifyToken(ctx.jwtKey, ctx.clock, token);
      if (claims) return `u:${claims.sub}`;
    }
    return `ip:${request.ip}`;
  };
  await app.register(rateLimit, {
    // Not the plugin's per-route hook: it runs after a route's own onRequest hooks, so a request an
    // auth hook refuses (a /v1 call with no key: 401) was never counted. The global hook below runs
    // ahead of every route hook instead; routes with their own limit (sign-in) or none (health,
    // metrics) keep the plugin's route config.
    global: false,
    timeWindow: config.rateLimit.windowMs,
    keyGenerator: keyOf,
    max: (_request, key) =>
      key.startsWith('ip:') ? config.rateLimit.anonymousMax : config.rateLimit.userMax,
    ...(redis ? { redis, nameSpace: config.rateLimit.namespace } : {}),
    // Redis trouble must not take the API down: requests pass, the error is logged above.
    skipOnError: true,
    errorResponseBuilder: (_request, context) =>
      new ApiError('rate_limited', `Rate limit exceeded; retry in ${context.after}.`, {
        retryAfterS: Math.max(1, Math.ceil(context.ttl / 1000)),
      }),
  });
  const limit = app.rateLimit();
  app.addHook('onRequest', async (request, reply) => {
    if (request.routeOptions.config?.rateLimit !== undefined) return;
    await limit.call(app, request, reply);
  });
}
