/**
 * buildApp: the whole coordinator HTTP surface as a fastify instance that does NOT listen (tests
 * use inject() or listen on port 0; server.ts listens). Registration order matters: error
 * handlers, security headers, CORS, OpenAPI collector and rate limits come before any route, so
 * every route (including those of capabilities added later) gets them.
 */

import { createHash, randomBytes } from 'node:crypto';
import path from 'node:path';
import cors from '@fastify/cors';
import rateLimit from '@fastify/rate-limit';
import swagger from '@fastify/swagger';
import type { TierName } from '@gpumesh/protocol';
import Fastify, { type FastifyInstance, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import { Redis } from 'ioredis';
import { createPublicClient, http, type PublicClient } from 'viem';
import { allowedMethods } from './allowed-methods.js';
import type { AppContext, RouteEntry } from './app-context.js';
import { createFailureCounter } from './auth/create-failure-counter.js';
import { devSignInRoutes } from './auth/dev-sign-in.js';
import { limitFailedCredentials } from './auth/limit-failed-credentials.js';
import { loadJwtKey } from './auth/load-jwt-key.js';
import { bearerToken, createRequireUser } from './auth/require-user.js';
import { authRoutes } from './auth/routes.js';
import { verifyToken } from './auth/verify-token.js';
import { loadCatalog } from './catalog/catalog.js';
import { catalogRoutes } from './catalog/catalog-routes.js';
import { chainRoutes } from './chain/routes.js';
import { type Clock, systemClock } from './clock.js';
import type { CoordinatorConfig } from './config.js';
import type { Store } from './db/store.js';
import { discoveryRoutes } from './discovery/routes.js';
import { ApiError, errorHandler, notFoundHandler } from './errors.js';
import { exceedsJsonDepth } from './exceeds-json-depth.js';
import { hubPlugin } from './hub/hub-plugin.js';
import { AcceptedKeys } from './keys/accepted-keys.js';
import { keysRoutes } from './keys/routes.js';
import { Ledger } from './ledger/ledger.js';
import { ORPHANED_HOLD_SWEEP_MS, REPLICA_RENEW_MS } from './ledger/replica-leases.js';
import { STALE_HOLD_SWEEP_MS, staleHoldAgeMs } from './ledger/stale-holds.js';
import { createMetrics } from './metrics/create-metrics.js';
import { healthRoutes } from './metrics/health-routes.js';
import { metricsRoutes } from './metrics/metrics-routes.js';
import { listHubNodes } from './pages/list-hub-nodes.js';
import { NODE_LIST_LIMIT } from './pages/network-stats.js';
import { NodePackages } from './pages/node-packages.js';
import { pagesRoutes } from './pages/pages-routes.js';
import { readTokensServed } from './pages/read-tokens-served.js';
import { peerPlugin } from './peer/peer-plugin.js';
import { uptimeOf } from './provider/node-sessions.js';
import { providerRoutes } from './provider/provider-routes.js';
import { newRequestId } from './request-id.js';
import { securityHeaders } from './security-headers.js';
import { CanaryRunner } from './trust/canary-runner.js';
import { type LocalVerifier, startLocalVerifier } from './trust/local-verifier.js';
import { Probation } from './trust/probation.js';
import { ReputationGuard } from './trust/reputation-guard.js';
import { TrafficShapes } from './trust/traffic-shapes.js';
import { recentSuspensions, suspendedNodeIds, trustSummaries } from './trust/trust-views.js';
import { activityRoutes } from './usage/activity-routes.js';
import { keepUsageRolled } from './usage/keep-usage-rolled.js';
import { userRoutes } from './users/routes.js';
import { routerRoutes } from './v1/routes.js';
import { createKeyring, type Keyring } from './wallets/keyring.js';
import { loadMasterKey } from './wallets/load-master-key.js';
import { walletRoutes } from './wallets/routes.js';

export type { AppContext, RouteEntry };

export type BuildAppOptions = {
  config: CoordinatorConfig;
  /** An open, migrated store (openStore + migrate); the caller closes it after the app. */
  store: Store;
  clock?: Clock;
  /** fastify logger: false in tests; default pino at config.logLevel. */
  logger?: FastifyServerOptions['logger'];
  /** Master-key keyring; default from config (masterKey or <dataDir>/master.key). */
  keyring?: Keyring;
  /** On a SQLite file, the ledger writes in a thread of its own (default true; ledger/ledger.ts). */
  ledgerWriterThread?: boolean;
  /** A node owner's staking tier for the hub (default: CHAIN's staking, else none). */
  tierOf?: (owner: string) => Promise<TierName>;
};

declare module 'fastify' {
  interface FastifyInstance {
    /** The app's shared context (config, db, clock, keyring, route table …). */
    ctx: AppContext;
    /** Canaries and verification of what nodes serve (trust/). */
    canaries: CanaryRunner;
    reputation: ReputationGuard;
  }
}

/** Builds the coordinator app. Await `app.ready()` (or inject) before use; `app.close()` frees it. */
export async function buildApp(options: BuildAppOptions): Promise<FastifyInstance> {
  const { config, store } = options;
  const { db } = store;
  const clock = options.clock ?? systemClock;
  const keyring = options.keyring ?? createKeyring(loadMasterKey(config));
  const jwtKey = await loadJwtKey(db, keyring, clock);
  const chainClient = config.chain.rpcUrl
    ? (createPublicClient({ transport: http(config.chain.rpcUrl) }) as PublicClient)
    : undefined;
  const routes: RouteEntry[] = [];
  const replicaId = `coordinator-${randomBytes(6).toString('hex')}`;
  const ctx: AppContext = Object.freeze({
    config,
    replicaId,
    store,
    db,
    ledger: new Ledger(store, {
      clock,
      holder: replicaId,
      ...(options.ledgerWriterThread !== undefined ? { writerThread: options.ledgerWriterThread } : {}),
    }),
    clock,
    catalog: loadCatalog(config.catalogFile),
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
    // Every response carries its id (x-request-id, set below), ours, never the client's.
    genReqId: () => newRequestId(),
    // OpenRouter's base URL ends in /api/v1: every /v1 route answers there too (account-routes.ts
    // keeps OpenRouter's own /api/v1 paths).
    rewriteUrl: (request) => openRouterPath(request.url ?? '/'),
    // Router-level failures (bad URL encoding, over-long params) answer in the common shape too.
    frameworkErrors: (error, request, reply) => errorHandler(error, request, reply),
  });

  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler(notFoundHandler((path) => allowedMethods(routes, path)));
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
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
  app.addHook('onClose', () => ctx.ledger.close());
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
    // Any request header (the browser SDKs send x-stainless-*, openai-organization, …): the
    // preflight's Access-Control-Request-Headers are echoed. Credentials are bearer tokens, never
    // cookies, so this opens nothing.
    exposedHeaders: [
      'x-request-id',
      'x-gpumesh-node',
      'retry-after',
      'x-ratelimit-limit',
      'x-ratelimit-remaining',
      'x-ratelimit-reset',
    ],
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
    // Every operation has an id: its own, or one made from its method and path (stable, unique).
    transform: ({ schema, url, route }) => ({
      schema: { ...schema, operationId: schema?.operationId ?? operationIdOf(String(route.method), url) },
      url,
    }),
  });
  if (config.rateLimit.enabled) await registerRateLimit(app, ctx);

  await app.register(authRoutes, ctx);
  await app.register(devSignInRoutes, ctx);
  await app.register(userRoutes, ctx);
  await app.register(walletRoutes, ctx);
  await app.register(keysRoutes, ctx);
  const probation = new Probation(config.trust.probationShare);
  await app.register(hubPlugin, { ctx, probation, ...(options.tierOf ? { tierOf: options.tierOf } : {}) });
  await app.register(peerPlugin, ctx);
  // Client jobs' shapes (never their text), that canaries are made like (issue 29).
  const shapes = new TrafficShapes();
  const canaries = new CanaryRunner({
    hub: app.hub,
    router: app.router,
    store: ctx.store,
    settings: config.trust,
    platformFeeBps: config.platformFeeBps,
    jobTimeoutMs: config.router.jobTimeoutMs,
    clock: { now: () => Date.now() },
    log: app.log,
    probation,
    shapes,
    maxTokensCap: config.router.maxTokensCap,
    settled: () => ctx.ledger.idle(),
  });
  await app.register(routerRoutes, {
    ctx,
    router: app.router,
    probation,
    spotCheck: (entry, job) => {
      canaries.spotCheck(entry, job);
    },
    noteTraffic: (model, kind, request, stream, shareable) =>
      shapes.note(model, kind, request, stream, { shareable }),
  });
  await app.register(activityRoutes, ctx);
  await app.register(providerRoutes, { ctx, index: app.hub.index, hub: app.hub });
  app.decorate('canaries', canaries);
  const reputation = new ReputationGuard({
    hub: app.hub,
    store: ctx.store,
    settings: config.trust,
    clock: ctx.clock,
    probation,
    log: app.log,
  });
  app.decorate('reputation', reputation);
  let localVerifier: Promise<LocalVerifier | undefined> = Promise.resolve(undefined);
  app.addHook('onReady', async () => {
    canaries.start();
    reputation.start();
    const modelsDir = config.trust.verifierModelsDir;
    if (modelsDir) {
      // Loaded in the background: hashing and loading large weights must not hold up the API.
      localVerifier = startLocalVerifier({ modelsDir, stateDir: path.join(config.dataDir, 'verifier') }).then(
        (verifier) => {
          canaries.setLocalVerifier(verifier);
          return verifier;
        },
        (err: unknown) => {
          app.log.error({ err, modelsDir }, 'the coordinator verifier could not load its models');
          return undefined;
        },
      );
    }
  });
  app.addHook('preClose', async () => {
    canaries.stop();
    reputation.stop();
    canaries.setLocalVerifier(undefined);
    await (await localVerifier)?.close();
  });
  sweepStaleHolds(app, ctx);
  keepReplicaLease(app, ctx);
  keepUsageRolled(app, ctx);
  await app.register(catalogRoutes, ctx);
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
    network: {
      listNodes: () => listHubNodes(app.hub),
      tokensServed: () => readTokensServed(ctx),
      uptime24h: (ids) => {
        const now = ctx.clock.now();
        const live = new Set([...app.hub.index.nodes()].map((n) => n.nodeId.toLowerCase()));
        return uptimeOf(ctx.db, ids, { from: now - 86_400_000, to: now }, (id) => live.has(id));
      },
      trust: (ids) => {
        const live = new Set([...app.hub.index.nodes()].map((n) => n.nodeId.toLowerCase()));
        return trustSummaries(ctx.db, ids, ctx.clock.now(), (id) => live.has(id));
      },
      suspensions: () => recentSuspensions(ctx.db),
      suspendedNodes: () => suspendedNodeIds(ctx.db, NODE_LIST_LIMIT),
      spotCheckRate: config.trust.spotCheckRate,
    },
    nodePackages: new NodePackages({ dir: config.nodePackagesDir }),
    now: () => clock.now(),
  });
  await app.register(chainRoutes, ctx);
  return app;
}

/**
 * Rate limits: first a per-IP budget of failed credentials, checked before any credential is
 * (auth/limit-failed-credentials.ts); then per IP on sign-in routes (their route config), per user
 * elsewhere, ahead of any route's own credential check (a refused request counts too) — the key is the JWT's subject when one verifies, the API key's hash for sk- keys, the
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

/**
 * Releases the holds a coordinator that died mid-request left behind: at start, then every
 * STALE_HOLD_SWEEP_MS. A hold lives at most one job timeout per attempt plus the ledger's queue.
 */
function sweepStaleHolds(app: FastifyInstance, ctx: AppContext): void {
  const sweep = async () => {
    const released = await ctx.ledger
      .releaseStaleHolds(staleHoldAgeMs(ctx.config.router))
      .catch((error: unknown) => {
        app.log.error({ err: error }, 'stale hold sweep failed');
        return 0;
      });
    if (released > 0) app.log.warn({ released }, 'released holds left by an interrupted request');
  };
  let timer: NodeJS.Timeout | undefined;
  app.addHook('onReady', async () => {
    await sweep();
    timer = setInterval(() => void sweep(), STALE_HOLD_SWEEP_MS).unref();
  });
  app.addHook('preClose', async () => clearInterval(timer));
}

/**
 * Keeps this replica's lease (ledger/replica-leases.ts) and releases the holds of replicas whose
 * lease ran out: renewed every REPLICA_RENEW_MS, swept every ORPHANED_HOLD_SWEEP_MS, dropped on
 * close (its leftover holds are then the others' to release at once).
 */
function keepReplicaLease(app: FastifyInstance, ctx: AppContext): void {
  const renew = () =>
    ctx.ledger
      .renewLease()
      .catch((error: unknown) => app.log.error({ err: error }, 'renewing the replica lease failed'));
  const sweep = async () => {
    const released = await ctx.ledger.releaseOrphanedHolds().catch((error: unknown) => {
      app.log.error({ err: error }, 'orphaned hold sweep failed');
      return 0;
    });
    if (released > 0) app.log.warn({ released }, 'released the holds of a replica that stopped');
  };
  const timers: NodeJS.Timeout[] = [];
  app.addHook('onReady', async () => {
    await ctx.ledger.renewLease();
    timers.push(setInterval(() => void renew(), REPLICA_RENEW_MS).unref());
    timers.push(setInterval(() => void sweep(), ORPHANED_HOLD_SWEEP_MS).unref());
  });
  app.addHook('preClose', async () => {
    for (const timer of timers) clearInterval(timer);
  });
  app.addHook('onClose', async () => {
    await ctx.ledger
      .dropLease()
      .catch((error: unknown) => app.log.error({ err: error }, 'dropping the replica lease failed'));
  });
}

/** `GET /api/router/keys/:id` → `getApiRouterKeysById`: an operation id from the method and path. */
export function operationIdOf(method: string, url: string): string {
  const words = url
    .split('/')
    .filter(Boolean)
    .map((part) => (part.startsWith(':') ? `by-${part.slice(1)}` : part))
    .flatMap((part) => part.split(/[^A-Za-z0-9]+/))
    .filter(Boolean);
  return [method.toLowerCase(), ...words.map((w) => w[0]!.toUpperCase() + w.slice(1))].join('');
}

/** OpenRouter's own /api/v1 paths (v1/account-routes.ts); any other /api/v1 path is its /v1 route. */
const OPENROUTER_OWN = /^\/api\/v1\/(key|generation|credits|models)(?:[?#]|$)/;

function openRouterPath(url: string): string {
  return url.startsWith('/api/v1/') && !OPENROUTER_OWN.test(url) ? url.slice(4) : url;
}
