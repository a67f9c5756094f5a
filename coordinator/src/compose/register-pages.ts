import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app-context.js';
import { uptimeOf } from '../hub/node-sessions.js';
import { listHubNodes } from '../pages/list-hub-nodes.js';
import { NODE_LIST_LIMIT } from '../pages/network-stats.js';
import { NodePackages } from '../pages/node-packages.js';
import { pagesRoutes } from '../pages/pages-routes.js';
import { readTokensServed } from '../pages/read-tokens-served.js';
import { recentSuspensions, suspendedNodeIds, trustSummaries } from '../trust/standing/trust-views.js';

/**
 * The pages (pages/): the dashboard, /network and the install files, with what /network shows of
 * the network read from the hub (`app.hub`), the provider's sessions and trust's views.
 */
export async function registerPages(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const { config } = ctx;
  // The live ids, made again only when the index's membership or states changed (its version):
  // one set of up to 10,000 ids per stats computation, not one per reader.
  let live: { version: number; ids: Set<string> } | undefined;
  const isLive = () => {
    const { version } = app.hub.index;
    if (live?.version !== version)
      live = { version, ids: new Set([...app.hub.index.nodes()].map((n) => n.nodeId.toLowerCase())) };
    const { ids } = live;
    return (id: string) => ids.has(id);
  };
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
        return uptimeOf(ctx.db, ids, { from: now - 86_400_000, to: now }, isLive());
      },
      trust: (ids) => trustSummaries(ctx.db, ids, ctx.clock.now(), isLive()),
      suspensions: () => recentSuspensions(ctx.db),
      suspendedNodes: () => suspendedNodeIds(ctx.db, NODE_LIST_LIMIT),
      spotCheckRate: config.trust.spotCheckRate,
    },
    nodePackages: new NodePackages({ dir: config.nodePackagesDir }),
    now: () => ctx.clock.now(),
  });
}
