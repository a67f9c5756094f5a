/**
 * Replica mode (`peer.port` set), as an app-level plugin registered after the hub: this replica
 * serves peer-RPC for the nodes it holds (peer-server.ts), announces them on Redis, indexes the
 * other replicas' nodes (replica-directory.ts), and gives the router the peer transport
 * (peer-transport.ts) for those. The replicas share the ledger (PostgreSQL) and one peer secret,
 * kept in the database like the JWT key.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { type ChannelCredentials, credentials, ServerCredentials } from '@grpc/grpc-js';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { Redis } from 'ioredis';
import type { AppContext } from '../app-context.js';
import type { CoordinatorConfig } from '../config.js';
import { ApiError } from '../errors.js';
import { loadPeerKeys } from './peer-keys.js';
import { startPeerServer } from './peer-server.js';
import { PeerTransport } from './peer-transport.js';
import { ReplicaDirectory } from './replica-directory.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The peer-RPC address this replica announces (host:port); undefined without `peer.port`. */
    peerUrl: string | undefined;
  }
}

/**
 * With `peer.port` set: this replica serves peer-RPC for the nodes it holds, announces them on
 * Redis, indexes the other replicas' nodes, and relays jobs for those to their replicas. The
 * replicas share the ledger (PostgreSQL) and one peer secret, kept in the database like the JWT key.
 */
async function replicas(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const { hub, router } = app;
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
    router,
    secret: macKey,
    host: peer.host,
    port: peer.port,
    log: app.log,
    ...(tls ? { credentials: tls.server } : {}),
  });
  const transport = new PeerTransport({
    hub,
    caller,
    secret: macKey,
    ...(tls ? { credentials: tls.client } : {}),
  });
  router.setPeer(transport);
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
    router.setPeer(undefined);
    transport.close();
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

/** Replica mode as an app-level plugin (its `peerUrl` decoration is the whole app's). */
export const peerPlugin = fp(replicas, { name: 'gpumesh-peer', dependencies: ['gpumesh-hub'] });
