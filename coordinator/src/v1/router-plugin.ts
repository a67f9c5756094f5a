/**
 * Wires the router into the app: the node hub on the HTTP server's WebSocket upgrade (path
 * HUB_PATH), and the /v1 and /api/router routes. Registered by buildApp.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { TierName } from '@gpumesh/protocol';
import { type ChannelCredentials, credentials, ServerCredentials } from '@grpc/grpc-js';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { Redis } from 'ioredis';
import { WebSocketServer } from 'ws';
import type { AppContext } from '../app-context.js';
import type { CoordinatorConfig } from '../config.js';
import { ApiError } from '../errors.js';
import { Hub } from '../hub/hub.js';
import { releaseStaleHolds, STALE_HOLD_SWEEP_MS, staleHoldAgeMs } from '../ledger/release-stale-holds.js';
import { loadPeerKeys } from '../peer/peer-keys.js';
import { PeerRelay, startPeerServer } from '../peer/peer-relay.js';
import { ReplicaDirectory } from '../peer/replica-directory.js';
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
    /** The peer-RPC address this replica announces (host:port); undefined without `peer.port`. */
    peerUrl: string | undefined;
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
  // A hold lives at most one job timeout per attempt plus the ledger's queue; older ones were left
  // by a coordinator that died mid-request (release-stale-holds.ts).
  const sweep = async () => {
    const released = await releaseStaleHolds(ctx.db, {
      olderThanMs: staleHoldAgeMs(r),
    }).catch((error: unknown) => {
      app.log.error({ err: error }, 'stale hold sweep failed');
      return 0;
    });
    if (released > 0) app.log.warn({ released }, 'released holds left by an interrupted request');
  };
  let sweeper: NodeJS.Timeout | undefined;
  app.addHook('onReady', async () => {
    hub.start();
    await sweep();
    sweeper = setInterval(() => void sweep(), STALE_HOLD_SWEEP_MS).unref();
  });
  app.addHook('preClose', async () => {
    clearInterval(sweeper);
    hub.close();
    for (const ws of wss.clients) ws.terminate();
    wss.close();
  });
  await replicas(app, ctx, hub);
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

/**
 * With `peer.port` set: this replica serves peer-RPC for the nodes it holds, announces them on
 * Redis, indexes the other replicas' nodes, and relays jobs for those to their replicas. The
 * replicas share the ledger (PostgreSQL) and one peer secret, kept in the database like the JWT key.
 */
async function replicas(app: FastifyInstance, ctx: AppContext, hub: Hub): Promise<void> {
  const { peer } = ctx.config;
  if (peer.port === undefined) {
    app.decorate('peerUrl', undefined);
    return;
  }
  // loadConfig made sure of PostgreSQL and Redis (checkPeer).
  const redisUrl = ctx.config.redisUrl!;
  const tls = peerTls(peer);
  const { caller, macKey } = await loadPeerKeys(ctx.db, ctx.keyring, ctx.clock);
  const server = await startPeerServer({
    hub,
    secret: macKey,
    host: peer.host,
    port: peer.port,
    log: app.log,
    ...(tls ? { credentials: tls.server } : {}),
  });
  const relay = new PeerRelay({ hub, caller, secret: macKey, ...(tls ? { credentials: tls.client } : {}) });
  hub.setRelay(relay);
  const connect = () => {
    const redis = new Redis(redisUrl, { connectTimeout: 1_000, maxRetriesPerRequest: 1 });
    redis.on('error', (error) => app.log.warn({ err: error }, 'replica directory redis error'));
    return redis;
  };
  const publisher = connect();
  const subscriber = connect();
  // Bound to every interface, this replica is dialled by its host name unless peer.url says better.
  const wildcard = peer.host === '0.0.0.0' || peer.host === '::';
  const peerUrl = peer.url ?? `${wildcard ? hostname() : peer.host}:${server.port}`;
  app.decorate('peerUrl', peerUrl);
  const directory = new ReplicaDirectory({
    hub,
    publisher,
    subscriber,
    namespace: peer.namespace,
    replicaId: hub.coordinatorId,
    peerUrl,
    macKey,
    announceMs: peer.announceMs,
    log: app.log,
  });
  app.addHook('onReady', async () => {
    await directory.start();
  });
  // On close, an empty announcement: the others drop this replica's nodes at once.
  app.addHook('preClose', async () => {
    await directory.close();
    hub.setRelay(undefined);
    relay.close();
    await server.close();
    await Promise.all([publisher.quit(), subscriber.quit()].map((p) => p.catch(() => {})));
  });
}

/** Mutual-TLS credentials from peer.tlsCert/tlsKey/tlsCa (all set, or none: plaintext). */
function peerTls(
  peer: CoordinatorConfig['peer'],
): { server: ServerCredentials; client: ChannelCredentials } | undefined {
  if (peer.tlsCert === undefined || peer.tlsKey === undefined || peer.tlsCa === undefined) return undefined;
  const read = (file: string, param: string) => {
    try {
      return readFileSync(file);
    } catch (error) {
      throw new ApiError('invalid_config', `configuration ${param}: cannot read ${file}`, {
        param,
        cause: error,
      });
    }
  };
  const cert = read(peer.tlsCert, 'peer.tlsCert');
  const key = read(peer.tlsKey, 'peer.tlsKey');
  const ca = read(peer.tlsCa, 'peer.tlsCa');
  return {
    // Both sides show a certificate the network's CA signed.
    server: ServerCredentials.createSsl(ca, [{ cert_chain: cert, private_key: key }], true),
    client: credentials.createSsl(ca, key, cert),
  };
}

/** The router as an app-level plugin (its `hub` decoration is visible to the whole app). */
export const routerPlugin = fp(router, { name: 'gpumesh-router' });
