/**
 * Wires the router into the app: the node hub on the HTTP server's WebSocket upgrade (path
 * HUB_PATH), and the /v1 and /api/router routes. Registered by buildApp.
 */
import type { TierName } from '@gpumesh/protocol';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { WebSocketServer } from 'ws';
import type { AppContext } from '../app.js';
import { Hub } from '../hub/hub.js';
import { tierOf } from '../staking/tier-of.js';
import { routerRoutes } from './routes.js';

/** Where nodes connect: ws(s)://<coordinator>/node (the node daemon's default hub path). */
export const HUB_PATH = '/node';
/** Every path the hub answers on: /node, and /v0/nodes as NODE_PROTOCOL.md's examples write it. */
export const HUB_PATHS: readonly string[] = [HUB_PATH, '/v0/nodes'];

declare module 'fastify' {
  interface FastifyInstance {
    /** The node hub (live nodes, the pick index). */
    hub: Hub;
  }
}

export type RouterPluginOptions = {
  ctx: AppContext;
  /** A node owner's tier; default: the owner's stake (staking/tier-of.ts). */
  tierOf?: (owner: string) => Promise<TierName>;
};

async function router(app: FastifyInstance, options: RouterPluginOptions): Promise<void> {
  const { ctx } = options;
  const r = ctx.config.router;
  const hub = new Hub({
    nativeUsdPriceNano: ctx.config.chain.nativeUsdPriceNano,
    heartbeatIntervalMs: r.heartbeatIntervalMs,
    maxFrameBytes: r.maxFrameBytes,
    clock: { now: () => Date.now() },
    tierOf: options.tierOf ?? ((owner) => tierOf(ctx.db, owner)),
    log: app.log,
  });
  app.decorate('hub', hub);
  const wss = new WebSocketServer({ noServer: true, maxPayload: r.maxFrameBytes + 1024 });
  wss.on('connection', (socket) => hub.accept(socket));
  app.server.on('upgrade', (req, socket, head) => {
    const path = (req.url ?? '').split('?')[0];
    if (!HUB_PATHS.includes(path ?? '')) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
  });
  app.addHook('onReady', async () => hub.start());
  app.addHook('preClose', async () => {
    hub.close();
    for (const ws of wss.clients) ws.terminate();
    wss.close();
  });
  await app.register(routerRoutes, {
    ctx,
    hub,
    settings: {
      platformFeeBps: ctx.config.platformFeeBps,
      jobTimeoutMs: r.jobTimeoutMs,
      maxAttempts: r.maxAttempts,
      maxTokensCap: r.maxTokensCap,
      nativeUsdPriceNano: ctx.config.chain.nativeUsdPriceNano,
    },
  });
}

/** The router as an app-level plugin (its `hub` decoration is visible to the whole app). */
export const routerPlugin = fp(router, { name: 'gpumesh-router' });
