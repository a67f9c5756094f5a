/**
 * buildApp: the composition root. It builds the whole coordinator — context, ledger timers, hub and
 * router, trust, chain services and their timers — and registers each capability's routes, as a
 * fastify instance that does NOT listen (tests use inject() or listen on port 0; server.ts
 * listens). Capabilities only register routes; what starts, and what it is wired to, is decided
 * here and in compose/. Registration order matters: error handlers, security headers, CORS,
 * OpenAPI collector and rate limits come before any route, so every route (including those of
 * capabilities added later) gets them.
 */

import type { TierName } from '@gpumesh/protocol';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import type { AppContext, RouteEntry } from './app-context.js';
import { devSignInRoutes } from './auth/dev-sign-in.js';
import { createRequireUser } from './auth/require-user.js';
import { authRoutes } from './auth/routes.js';
import { catalogRoutes } from './catalog/catalog-routes.js';
import { type Clock, systemClock } from './clock.js';
import { createAppContext } from './compose/create-app-context.js';
import { createFastify } from './compose/create-fastify.js';
import { registerChain } from './compose/register-chain.js';
import { registerHttpPlugins } from './compose/register-http-plugins.js';
import { registerPages } from './compose/register-pages.js';
import { registerRateLimit } from './compose/register-rate-limit.js';
import { startHub } from './compose/start-hub.js';
import { startLedgerTimers } from './compose/start-ledger-timers.js';
import { startTrust, type Trust } from './compose/start-trust.js';
import type { CoordinatorConfig } from './config.js';
import type { Store } from './db/store.js';
import { discoveryRoutes } from './discovery/routes.js';
import { keysRoutes } from './keys/routes.js';
import { createMetrics } from './metrics/create-metrics.js';
import { healthRoutes } from './metrics/health-routes.js';
import { metricsRoutes } from './metrics/metrics-routes.js';
import { listHubNodes } from './pages/list-hub-nodes.js';
import { peerPlugin } from './peer/peer-plugin.js';
import { providerRoutes } from './provider/provider-routes.js';
import { TrafficSample } from './trust/canaries/traffic-sample.js';
import { checkableRequest } from './trust/checks/judge.js';
import { evidenceRoutes } from './trust/slashing/evidence-routes.js';
import { Probation } from './trust/standing/probation.js';
import { Standings } from './trust/standing/standings.js';
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
  /** A node owner's tier for the hub (default: CHAIN's staking, else none). */
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
  const { config } = options;
  const routes: RouteEntry[] = [];
  const ctx = await createAppContext({
    config,
    store: options.store,
    clock: options.clock ?? systemClock,
    keyring: options.keyring ?? createKeyring(loadMasterKey(config)),
    ledgerWriterThread: options.ledgerWriterThread,
    routes,
  });
  const app = createFastify(config, options.logger, routes);
  app.decorate('ctx', ctx);
  app.addHook('onClose', () => ctx.ledger.close());
  // First, so every route is timed and `app.metrics` exists for every capability.
  await app.register(metricsRoutes, { metrics: createMetrics() });
  app.decorateRequest('user', null);
  app.decorate('requireUser', createRequireUser(ctx.db, ctx.jwtKey, ctx.clock));
  recordRoutes(app, routes);
  await registerHttpPlugins(app, config);
  if (config.rateLimit.enabled) await registerRateLimit(app, ctx);

  await registerAccountRoutes(app, ctx);
  // Each node's standing as its node_trust row says; probation and the catalog read it.
  const standings = new Standings();
  await startHub(app, ctx, { standings, tierOf: options.tierOf });
  await app.register(peerPlugin, ctx);
  const trust = startTrust(app, ctx, standings);
  await registerInferenceRoutes(app, ctx, standings, trust);
  startLedgerTimers(app, ctx);
  keepUsageRolled(app, ctx);
  await app.register(catalogRoutes, ctx);
  await app.register(discoveryRoutes, ctx);
  // Each replica counts the nodes connected to it, so the replicas' gauges add up to the network.
  app.metrics.trackNodes(() => listHubNodes(app.hub, { localOnly: true }));
  await app.register(healthRoutes, { db: ctx.db });
  await registerPages(app, ctx);
  await app.register(registerChain, ctx);
  return app;
}

/** Every route registered from here on, into the route table (discovery files, 405s, tests). */
function recordRoutes(app: FastifyInstance, routes: RouteEntry[]): void {
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      routes.push({ method, url: route.url, schema: route.schema as Record<string, unknown> | undefined });
    }
  });
}

/** Sign-in, the user, wallets and API keys. */
async function registerAccountRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  await app.register(authRoutes, ctx);
  await app.register(devSignInRoutes, ctx);
  await app.register(userRoutes, ctx);
  await app.register(walletRoutes, ctx);
  await app.register(keysRoutes, ctx);
}

/** /v1 with the router, probation and trust's hooks; the activity and provider views beside it. */
async function registerInferenceRoutes(
  app: FastifyInstance,
  ctx: AppContext,
  standings: Standings,
  { canaries, shapes, replays }: Trust,
): Promise<void> {
  const learnt = new TrafficSample();
  await app.register(routerRoutes, {
    ctx,
    router: app.router,
    probation: new Probation(ctx.config.trust.probationShare, standings),
    standings,
    spotCheck: (entry, job) => {
      canaries.spotCheck(entry, job);
    },
    noteTraffic: ({ model, kind, request, stream, shareable, node, tried }) => {
      // A sample of a busy model's jobs (trust/canaries/traffic-sample.ts).
      const now = Date.now();
      if (!learnt.take(model, now)) return;
      shapes.note(model, kind, request, stream, { shareable });
      if (shareable && checkableRequest(kind, request))
        replays?.note(model, { kind, request, stream }, { ...node, tried }, now);
    },
  });
  await app.register(activityRoutes, ctx);
  await app.register(providerRoutes, { ctx, index: app.hub.index, hub: app.hub });
  await app.register(evidenceRoutes, ctx);
}
