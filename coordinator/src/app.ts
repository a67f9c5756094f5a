/**
 * buildApp: the whole coordinator HTTP surface as a fastify instance that does NOT listen (tests
 * use inject() or listen on port 0; server.ts listens). Registration order matters: error
 * handlers, security headers, CORS, OpenAPI collector and rate limits come before any route, so
 * every route (including those of capabilities added later) gets them.
 */
import { createHash } from 'node:crypto';
import cors from '@fastify/cors';
import rateLimit from '@fastify/rate-limit';
import swagger from '@fastify/swagger';
import type { TierName } from '@gpumesh/protocol';
import Fastify, { type FastifyInstance, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import { createPublicClient, http, type PublicClient } from 'viem';
import type { AppContext, RouteEntry } from './app-context.js';
import { createFailureCounter } from './auth/create-failure-counter.js';
import { limitFailedCredentials } from './auth/limit-failed-credentials.js';
import { loadJwtKey } from './auth/load-jwt-key.js';
import { bearerToken, createRequireUser } from './auth/require-user.js';
import { authRoutes } from './auth/routes.js';
import { verifyToken } from './auth/verify-token.js';
import { chainRoutes } from './chain/routes.js';
import { type Clock, systemClock } from './clock.js';
import type { CoordinatorConfig } from './config.js';
import type { Database } from './db/schema.js';
import { discoveryRoutes } from './discovery/routes.js';
import { ApiError, errorHandler, notFoundHandler } from './errors.js';
import { exceedsJsonDepth } from './exceeds-json-depth.js';
import { AcceptedKeys } from './keys/accepted-keys.js';
import { keysRoutes } from './keys/routes.js';
import { createMetrics } from './metrics/create-metrics.js';
import { healthRoutes } from './metrics/health-routes.js';
import { metricsRoutes } from './metrics/metrics-routes.js';
import { listHubNodes } from './pages/list-hub-nodes.js';
import { pagesRoutes } from './pages/pages-routes.js';
import { readTokensServed } from './pages/read-tokens-served.js';
import { securityHeaders } from './security-headers.js';
import { userRoutes } from './users/routes.js';
import { routerPlugin } from './v1/router-plugin.js';
import { createKeyring, type Keyring } from './wallets/keyring.js';
import { loadMasterKey } from './wallets/load-master-key.js';
import { walletRoutes } from './wallets/routes.js';

export type { AppContext, RouteEntry };

export type BuildAppOptions = {
  config: CoordinatorConfig;
  /** An open, migrated database (createDatabase + migrate). */
  db: Kysely<Database>;
  clock?: Clock;
  /** fastify logger: false in tests; default pino at config.logLevel. */
  logger?: FastifyServerOptions['logger'];
  /** Master-key keyring; default from config (masterKey or <dataDir>/master.key). */
  keyring?: Keyring;
  /** A node owner's staking tier for the hub (default: CHAIN's staking, else none). */
  tierOf?: (owner: string) => Promise<TierName>;
};

declare module 'fastify' {
  interface FastifyInstance {
    /** The app's shared context (config, db, clock, keyring, route table …). */
    ctx: AppContext;
  }
}

/** Builds the coordinator app. Await `app.ready()` (or inject) before use; `app.close()` frees it. */
export async function buildApp(options: BuildAppOptions): Promise<FastifyInstance> {
  const { config, db } = options;
  const clock = options.clock ?? systemClock;
  const keyring = options.keyring ?? createKeyring(loadMasterKey(config));
  const jwtKey = await loadJwtKey(db, keyring, clock);
  const chainClient = config.chain.rpcUrl
    ? (createPublicClient({ transport: http(config.chain.rpcUrl) }) as PublicClient)
    : undefined;
  const routes: RouteEntry[] = [];
  const ctx: AppContext = Object.freeze({
    config,
    db,
    clock,
    keyring,
    jwtKey,
    chainClient,
    acceptedKeys: new AcceptedKeys(),
    routes,
  });

  const app = Fastify({
    logger: options.logger ?? {
      level: config.logLevel,
      redact: ['req.headers.authorization', 'req.headers.cookie'],
    },
    bodyLimit: config.bodyLimitBytes,
    trustProxy: config.trustProxy,
    // Unknown body fields are refused (additionalProperties: false), not silently dropped. No type
    // coercion: it turned `max_tokens: false` into null ("no limit") and `temperature: null` into 0.
    // Query strings and path params declare only string fields (app.test.ts checks the route table),
    // so they need none either.
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: true } },
    routerOptions: { maxParamLength: 200 },
    // Router-level failures (bad URL encoding, over-long params) answer in the common shape too.
    frameworkErrors: (error, request, reply) => errorHandler(error, request, reply),
  });

  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler(notFoundHandler);
  // JSON bodies nested deeper than bodyMaxDepth are refused before they are parsed: deeper ones
  // parse, then overflow the stack of a recursive walk later (a 500 in the frame encoder). The
  // parse itself stays fastify's (secure-json-parse, refusing __proto__ and constructor.prototype).
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (exceedsJsonDepth(text, config.bodyMaxDepth)) {
      const error = new ApiError('invalid_request', `JSON nested deeper than ${config.bodyMaxDepth} levels.`);
      done(error, undefined);
      return;
    }
    parseJson(request, text, done);
  });
  app.decorate('ctx', ctx);
  // First, so every route is timed and `app.metrics` exists for every capability.
  await app.register(metricsRoutes, { metrics: createMetrics() });
  app.decorateRequest('user', null);
  app.decorate('requireUser', createRequireUser(db, jwtKey, clock));
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      routes.push({ method, url: route.url, schema: route.schema as Record<string, unknown> | undefined });
    }
  });

  await app.register(securityHeaders);
  await app.register(cors, {
    origin: config.corsOrigins.includes('*') ? '*' : [...config.corsOrigins],
    methods: ['GET', 'POST', 'DELETE', 'OPTIONS'],
    allowedHeaders: ['Authorization', 'Content-Type'],
    maxAge: 600,
  });
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'gpumesh',
        version: '0.1.0',
        description: 'Wallet sign-in, credits and OpenAI-compatible inference.',
      },
      servers: [{ url: config.publicUrl }],
      components: {
        securitySchemes: {
          bearerJwt: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
          apiKey: { type: 'http', scheme: 'bearer', description: 'sk- inference key' },
        },
      },
    },
  });
  if (config.rateLimit.enabled) await registerRateLimit(app, ctx);

  await app.register(authRoutes, ctx);
  await app.register(userRoutes, ctx);
  await app.register(walletRoutes, ctx);
  await app.register(keysRoutes, ctx);
  await app.register(routerPlugin, { ctx, ...(options.tierOf ? { tierOf: options.tierOf } : {}) });
  await app.register(discoveryRoutes, ctx);
  // Each replica counts the nodes connected to it, so the replicas' gauges add up to the network.
  app.metrics.trackNodes(() => listHubNodes(app.hub, { localOnly: true }));
  await app.register(healthRoutes, { db });
  await app.register(pagesRoutes, {
    appUrl: config.publicUrl,
    routerUrl: config.routerUrl,
    nativeSymbol: config.chain.nativeSymbol,
    nativeUsdPriceNano: config.chain.nativeUsdPriceNano,
    staking: config.staking,
    network: { listNodes: () => listHubNodes(app.hub), tokensServed: () => readTokensServed(db) },
    now: () => clock.now(),
  });
  await app.register(chainRoutes, ctx);
  return app;
}

/**
 * Rate limits: first a per-IP budget of failed credentials, checked before any credential is
 * (auth/limit-failed-credentials.ts); then per IP on sign-in routes (their route config), per user
 * elsewhere — the key is the JWT's subject when one verifies, the API key's hash for sk- keys, the
 * IP otherwise. On Redis when configured, so every replica counts against the same limits.
 */
async function registerRateLimit(app: FastifyInstance, ctx: AppContext): Promise<void> {
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
    global: true,
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
}
