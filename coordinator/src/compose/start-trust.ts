import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app-context.js';
import { ReplayPool } from '../trust/canaries/replay-pool.js';
import { TrafficShapes } from '../trust/canaries/traffic-shapes.js';
import { CanaryRunner } from '../trust/checks/canary-runner.js';
import { type LocalVerifier, startLocalVerifier } from '../trust/checks/local-verifier.js';
import { ReputationGuard } from '../trust/standing/reputation-guard.js';
import type { Standings } from '../trust/standing/standings.js';
import { Suspensions } from '../trust/standing/suspensions.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Canaries and verification of what nodes serve (trust/). */
    canaries: CanaryRunner;
    reputation: ReputationGuard;
  }
}

/**
 * What the routes feed trust: spot checks of live answers, client jobs' shapes for made canaries,
 * and shareable client jobs to replay as canaries (none when `trust.replayTraffic` is off).
 */
export type Trust = { canaries: CanaryRunner; shapes: TrafficShapes; replays: ReplayPool | undefined };

/**
 * Verification of what nodes serve (issues 20, 29): canaries and spot checks (`app.canaries`),
 * reputation suspensions (`app.reputation`), started when the app is ready and stopped before it
 * closes; the coordinator's own verifier loads in the background when `trust.verifierModelsDir`
 * is set. Needs `app.hub` and `app.router` (compose/start-hub.ts).
 */
export function startTrust(app: FastifyInstance, ctx: AppContext, standings: Standings): Trust {
  const { config } = ctx;
  // The one writer of a suspension, and what acts on one here (trust/standing/suspensions.ts).
  const suspensions = new Suspensions({
    store: ctx.store,
    policy: config.trust,
    standings,
    hub: app.hub,
    log: app.log,
  });
  // Client jobs' shapes (never their text), that canaries are made like (issue 29).
  const shapes = new TrafficShapes();
  // Shareable client jobs, replayed to other nodes as canaries (trust/canaries/replay-pool.ts).
  const replays = config.trust.replayTraffic ? new ReplayPool() : undefined;
  const canaries = new CanaryRunner({
    hub: app.hub,
    router: app.router,
    store: ctx.store,
    settings: config.trust,
    platformFeeBps: config.platformFeeBps,
    jobTimeoutMs: config.router.jobTimeoutMs,
    clock: { now: () => Date.now() },
    log: app.log,
    suspensions,
    catalog: ctx.catalog,
    shapes,
    ...(replays ? { replays } : {}),
    maxTokensCap: config.router.maxTokensCap,
    settled: () => ctx.ledger.idle(),
  });
  app.decorate('canaries', canaries);
  const reputation = new ReputationGuard({
    hub: app.hub,
    store: ctx.store,
    settings: config.trust,
    clock: ctx.clock,
    suspensions,
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
  return { canaries, shapes, replays };
}
