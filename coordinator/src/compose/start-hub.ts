import type { TierName } from '@gpumesh/protocol';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app-context.js';
import { Hub } from '../hub/hub.js';
import { hubPlugin } from '../hub/hub-plugin.js';
import { NodeSessionLog, SESSION_RENEW_MS } from '../hub/node-sessions.js';
import { linkNode, ownerOfNode } from '../provider/link-node.js';
import { Router } from '../router/router.js';
import { tierOf } from '../staking/tier-of.js';
import { type Standings, suspensionOf } from '../trust/standing/standings.js';
import { recordNodeMiss } from '../usage/record-node-miss.js';

export type StartHubOptions = {
  /** Loads each connecting node's standing (trust/standing/standings.ts). */
  standings: Standings;
  /** A node owner's tier; default: the owner's stake (staking/tier-of.ts). */
  tierOf?: ((owner: string) => Promise<TierName>) | undefined;
};

/**
 * The hub and the router (`app.hub`, `app.router`, served by hub/hub-plugin.ts), wired to what
 * the capabilities above them keep about nodes: sessions logged and renewed every SESSION_RENEW_MS
 * (hub/node-sessions.ts), owners linked (provider/link-node.ts), standings and suspensions
 * (trust/), tiers (staking/), missed jobs (usage/).
 */
export async function startHub(
  app: FastifyInstance,
  ctx: AppContext,
  options: StartHubOptions,
): Promise<void> {
  const r = ctx.config.router;
  const sessions = new NodeSessionLog(ctx.db, ctx.replicaId, () => ctx.clock.now());
  const hub = new Hub({
    onNodeSession: (event, nodeId) => {
      sessions.note(event, nodeId, (err) => app.log.warn({ err, nodeId }, 'logging the node session failed'));
      if (event === 'up') {
        options.standings
          .load(ctx.store, nodeId)
          .catch((err: unknown) => app.log.warn({ err, nodeId }, 'reading the node standing failed'));
      }
    },
    coordinatorId: ctx.replicaId,
    catalog: ctx.catalog,
    ownerOf: (nodeId) => ownerOfNode(ctx.store, nodeId),
    suspensionOf: (nodeId) => suspensionOf(ctx.db, nodeId),
    onOwnerProved: (nodeId, owner) => linkOwner(app, ctx, nodeId, owner),
    nativeUsdPriceNano: ctx.config.chain.nativeUsdPriceNano,
    heartbeatIntervalMs: r.heartbeatIntervalMs,
    maxFrameBytes: r.maxFrameBytes,
    clock: { now: () => Date.now() },
    tierOf: options.tierOf ?? ((owner) => tierOf(ctx.db, owner)),
    log: app.log,
  });
  const router = new Router({
    index: hub.index,
    local: hub,
    queue: { depth: r.queueDepth, waitMs: r.queueWaitMs },
    prefixCache: {
      lifetimeMs: r.prefixCacheLifetimeMs,
      affinity: r.prefixAffinity && { marginBps: r.prefixAffinityMarginBps },
    },
    onMiss: (nodeId) => {
      recordNodeMiss(ctx.db, { nodeId, now: ctx.clock.now() }).catch((err: unknown) =>
        app.log.warn({ err, nodeId }, 'recording a missed job failed'),
      );
    },
  });
  let renewTimer: NodeJS.Timeout | undefined;
  // Before the hub's own preClose, which waits for the nodes' closing handshakes.
  app.addHook('preClose', async () => clearInterval(renewTimer));
  await app.register(hubPlugin, { hub, router, maxFrameBytes: r.maxFrameBytes });
  app.addHook('onReady', async () => {
    await sessions.renew({ closeLeftOpen: true });
    renewTimer = setInterval(() => {
      sessions.renew().catch((err: unknown) => app.log.warn({ err }, 'renewing node sessions failed'));
    }, SESSION_RENEW_MS).unref();
  });
}

/** Records a node's proved owner; whatever the node earned before follows (provider/link-node.ts). */
function linkOwner(app: FastifyInstance, ctx: AppContext, nodeId: string, owner: string): void {
  linkNode(ctx.store, { nodeId, owner, now: ctx.clock.now() })
    .then(({ movedNano }) => {
      if (movedNano > 0n)
        app.log.info({ nodeId, owner, movedNano: String(movedNano) }, 'earnings moved to the owner');
    })
    .catch((err: unknown) => app.log.error({ err, nodeId }, 'recording the node owner failed'));
}
