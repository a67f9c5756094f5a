/**
 * The node hub and the router, as an app-level plugin (registered by buildApp): nodes connect on
 * the HTTP server's WebSocket upgrade (HUB_PATHS), the hub keeps the pick index in step with them,
 * and the router (router/router.ts) sends jobs to local nodes through the hub — and to other
 * replicas' nodes through the peer transport, once peer-plugin.ts sets it.
 */
import { frameJsonSchema, type TierName } from '@gpumesh/protocol';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { WebSocketServer } from 'ws';
import type { AppContext } from '../app-context.js';
import { linkNode, ownerOfNode } from '../provider/link-node.js';
import { NodeSessionLog, SESSION_RENEW_MS } from '../provider/node-sessions.js';
import { Router } from '../router/router.js';
import { tierOf } from '../staking/tier-of.js';
import type { Probation } from '../trust/probation.js';
import { standingsOf, suspensionOf } from '../trust/trust-store.js';
import { recordNodeMiss } from '../usage/record-node-miss.js';
import { Hub } from './hub.js';

/** Where nodes connect: ws(s)://<coordinator>/node (the node daemon's default hub path). */
export const HUB_PATH = '/node';
/**
 * Where the coordinator serves the protocol's frame JSON Schemas (protocol/schema/frames.schema.json),
 * for node implementers in other languages; the path follows the schema's `$id`.
 */
export const FRAME_SCHEMA_PATH = '/schema/v0/frames.schema.json';
/** How long a stopping coordinator waits for its nodes to answer its 1000 close before dropping them. */
export const SHUTDOWN_CLOSE_GRACE_MS = 1_000;
/** Every path the hub answers on: /node (NODE_PROTOCOL.md §2), and /v0/nodes, the path v0's examples used. */
export const HUB_PATHS: readonly string[] = [HUB_PATH, '/v0/nodes'];

declare module 'fastify' {
  interface FastifyInstance {
    /** The node hub (live nodes, the pick index). */
    hub: Hub;
    /** Picks' destination: sends jobs to nodes, here or on another replica, and counts their slots. */
    router: Router;
  }
}

export type HubPluginOptions = {
  ctx: AppContext;
  /** A node owner's tier; default: the owner's stake (staking/tier-of.ts). */
  tierOf?: (owner: string) => Promise<TierName>;
  /** Told each connecting node's standing (trust/probation.ts). */
  probation?: Probation;
};

async function hub(app: FastifyInstance, options: HubPluginOptions): Promise<void> {
  const { ctx } = options;
  const r = ctx.config.router;
  const sessions = new NodeSessionLog(ctx.db, ctx.replicaId, () => ctx.clock.now());
  const nodes = new Hub({
    onNodeSession: (event, nodeId) => {
      sessions.note(event, nodeId, (err) => app.log.warn({ err, nodeId }, 'logging the node session failed'));
      if (event === 'up' && options.probation) {
        const probation = options.probation;
        standingsOf(ctx.store, [nodeId])
          .then((standings) =>
            probation.set(nodeId, standings.get(nodeId.toLowerCase())?.status ?? 'probation'),
          )
          .catch((err: unknown) => app.log.warn({ err, nodeId }, 'reading the node standing failed'));
      }
    },
    coordinatorId: ctx.replicaId,
    catalog: ctx.catalog,
    ownerOf: (nodeId) => ownerOfNode(ctx.store, nodeId),
    suspensionOf: (nodeId) => suspensionOf(ctx.store, nodeId),
    onOwnerProved: (nodeId, owner) => {
      linkNode(ctx.store, { nodeId, owner, now: ctx.clock.now() })
        .then(({ movedNano }) => {
          if (movedNano > 0n)
            app.log.info({ nodeId, owner, movedNano: String(movedNano) }, 'earnings moved to the owner');
        })
        .catch((err: unknown) => app.log.error({ err, nodeId }, 'recording the node owner failed'));
    },
    nativeUsdPriceNano: ctx.config.chain.nativeUsdPriceNano,
    heartbeatIntervalMs: r.heartbeatIntervalMs,
    maxFrameBytes: r.maxFrameBytes,
    clock: { now: () => Date.now() },
    tierOf: options.tierOf ?? ((owner) => tierOf(ctx.db, owner)),
    log: app.log,
  });
  app.decorate('hub', nodes);
  app.decorate(
    'router',
    new Router({
      index: nodes.index,
      local: nodes,
      queue: { depth: r.queueDepth, waitMs: r.queueWaitMs },
      onMiss: (nodeId) => {
        recordNodeMiss(ctx.db, { nodeId, now: ctx.clock.now() }).catch((err: unknown) =>
          app.log.warn({ err, nodeId }, 'recording a missed job failed'),
        );
      },
    }),
  );
  const wss = new WebSocketServer({ noServer: true, maxPayload: r.maxFrameBytes + 1024 });
  wss.on('connection', (socket) => nodes.accept(socket));
  app.server.on('upgrade', (req, socket, head) => {
    const path = (req.url ?? '').split('?')[0];
    if (!HUB_PATHS.includes(path ?? '')) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
  });
  const frameSchema = JSON.stringify(frameJsonSchema());
  app.get(FRAME_SCHEMA_PATH, { schema: { hide: true } }, async (_request, reply) =>
    reply.type('application/schema+json; charset=utf-8').send(frameSchema),
  );
  let renewTimer: NodeJS.Timeout | undefined;
  app.addHook('onReady', async () => {
    nodes.start();
    await sessions.renew({ closeLeftOpen: true });
    renewTimer = setInterval(() => {
      sessions.renew().catch((err: unknown) => app.log.warn({ err }, 'renewing node sessions failed'));
    }, SESSION_RENEW_MS).unref();
  });
  app.addHook('preClose', async () => {
    clearInterval(renewTimer);
    // Each session was sent bye and a 1000 close (NODE_PROTOCOL.md §8); give the closing handshakes
    // a moment, so a node sees 1000 rather than a dropped socket (1006), then drop what is left.
    nodes.close();
    app.router.queue.close();
    await Promise.all(
      [...wss.clients].map(
        (ws) =>
          new Promise<void>((resolve) => {
            if (ws.readyState === ws.CLOSED) return resolve();
            const timer = setTimeout(() => {
              ws.terminate();
              resolve();
            }, SHUTDOWN_CLOSE_GRACE_MS);
            ws.once('close', () => {
              clearTimeout(timer);
              resolve();
            });
          }),
      ),
    );
    wss.close();
  });
}

/** The hub and router as an app-level plugin (its `hub` and `router` decorations are the whole app's). */
export const hubPlugin = fp(hub, { name: 'gpumesh-hub' });
