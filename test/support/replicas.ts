/**
 * Coordinator replicas for test/router-replicas*.test.ts: each its own app on one PostgreSQL schema
 * and one Redis, announcing its nodes to the others over peer-RPC (ANNOUNCE_MS apart).
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type NodeDaemon, type NodeDaemonOptions, startNodeDaemon, usdOffer } from '@gpumesh/node/testing';
import type { ChannelCredentials, Metadata, ServiceError } from '@grpc/grpc-js';
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { buildApp } from '../../coordinator/src/app.js';
import { loadConfig } from '../../coordinator/src/config.js';
import type { Database } from '../../coordinator/src/db/schema.js';
import { openStore, type Store } from '../../coordinator/src/db/store.js';
import { HUB_PATH } from '../../coordinator/src/hub/hub-plugin.js';
import type { Ledger } from '../../coordinator/src/ledger/ledger.js';
import { loadPeerProto } from '../../coordinator/src/peer/load-peer-proto.js';
import type { InferRequest, PingResponse } from '../../coordinator/src/peer/peer-messages.js';
import type { Announcement } from '../../coordinator/src/peer/replica-directory.js';
import { FEE_BPS, USD } from './expected-charge.js';
import { createTestSchema } from './services.js';

/** How often a replica announces its nodes. */
export const ANNOUNCE_MS = 100;

export type Replica = {
  app: FastifyInstance;
  store: Store;
  db: Kysely<Database>;
  ledger: Ledger;
  base: string;
  wsUrl: string;
  peerUrl: string;
};

/** What the replicas of one test network share: the database schema, Redis, the master key. */
export type ReplicaNetwork = {
  pgUrl: string;
  redisUrl: string;
  schema: { schema: string; drop(): Promise<void> };
  masterKey: string;
  /** The Redis namespace their announcements go to. */
  namespace: string;
};

/** A fresh, migrated schema on `pgUrl`, a new master key and namespace; `schema.drop()` removes it. */
export async function replicaNetwork(
  pgUrl: string,
  redisUrl: string,
  label: string,
): Promise<ReplicaNetwork> {
  const schema = await createTestSchema(pgUrl, label);
  const { migrate } = await import('../../coordinator/src/db/migrate.js');
  const admin = openStore({ pgUrl, schema: schema.schema });
  await migrate(admin.db);
  await admin.close();
  return {
    pgUrl,
    redisUrl,
    schema,
    masterKey: randomBytes(32).toString('hex'),
    namespace: `gmtest-${randomBytes(6).toString('hex')}`,
  };
}

/** A replica of `net`, listening on a free port; `peerExtra` adds peer settings (TLS). */
export async function startReplica(
  net: ReplicaNetwork,
  peerExtra: Record<string, unknown> = {},
  namespace = net.namespace,
): Promise<Replica> {
  const store = openStore({ pgUrl: net.pgUrl, schema: net.schema.schema });
  const config = loadConfig({
    overrides: {
      dataDir: '/nonexistent-unused',
      databaseUrl: net.pgUrl,
      databaseSchema: net.schema.schema,
      redisUrl: net.redisUrl,
      masterKey: net.masterKey,
      logLevel: 'silent',
      rateLimit: { enabled: false },
      platformFeeBps: FEE_BPS,
      peer: { port: 0, announceMs: ANNOUNCE_MS, namespace, ...peerExtra },
    },
  });
  const app = await buildApp({ config, store, logger: false, tierOf: async () => 'platinum' });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as AddressInfo).port;
  return {
    app,
    store,
    db: store.db,
    ledger: app.ctx.ledger,
    base: `http://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${port}${HUB_PATH}`,
    peerUrl: app.peerUrl ?? '',
  };
}

/**
 * A real node daemon (in this process, on its fixed-reply runtime) connected to replica `r`,
 * serving chat model m and embedding model e unless `options` say otherwise; added to `nodes`.
 */
export async function startReplicaNode(
  r: Replica,
  nodes: NodeDaemon[],
  options: Partial<NodeDaemonOptions> = {},
): Promise<NodeDaemon> {
  const node = await startNodeDaemon({
    url: r.wsUrl,
    models: [usdOffer('m', USD, 2n * USD), usdOffer('e', USD, 0n, { family: 'embedding' })],
    promptTokens: 11,
    replyTokens: ['Hello', ' from', ' a', ' fixed', ' node', '.'],
    ...options,
  });
  nodes.push(node);
  return node;
}

/** A throwaway CA and one replica certificate it signed (for 127.0.0.1, server and client use). */
export function makeCertificates(): { ca: string; cert: string; key: string } {
  const dir = mkdtempSync(join(tmpdir(), 'gm-peer-tls-'));
  const at = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  openssl(
    'req',
    '-x509',
    ...ec,
    '-keyout',
    at('ca.key'),
    '-out',
    at('ca.pem'),
    '-days',
    '1',
    '-subj',
    '/CN=gpumesh test CA',
  );
  openssl('req', ...ec, '-keyout', at('replica.key'), '-out', at('replica.csr'), '-subj', '/CN=replica');
  writeFileSync(at('ext'), 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n');
  openssl(
    'x509',
    '-req',
    '-in',
    at('replica.csr'),
    '-CA',
    at('ca.pem'),
    '-CAkey',
    at('ca.key'),
    '-CAcreateserial',
    '-out',
    at('replica.pem'),
    '-days',
    '1',
    '-extfile',
    at('ext'),
  );
  return { ca: at('ca.pem'), cert: at('replica.pem'), key: at('replica.key') };
}

/** A peer-RPC client, typed for the calls the tests make. */
export type PeerClient = {
  Ping(
    request: { ts: number },
    metadata: Metadata,
    callback: (error: ServiceError | null, response?: PingResponse) => void,
  ): void;
  Ping(
    request: { ts: number },
    metadata: Metadata,
    options: { deadline: number },
    callback: (error: ServiceError | null, response?: PingResponse) => void,
  ): void;
  Infer(
    request: InferRequest,
    metadata: Metadata,
  ): NodeJS.ReadableStream & { on(e: 'error', f: (e: ServiceError) => void): void };
  close(): void;
};

/** A peer-RPC client of the replica at `peerUrl` over `channel` (insecure, or TLS). */
export function peerClient(peerUrl: string, channel: ChannelCredentials): PeerClient {
  const PeerRpc = loadPeerProto();
  return new PeerRpc(peerUrl, channel) as unknown as PeerClient;
}

/**
 * The announcement of a replica that exists only in Redis ("ghost", its peer-RPC address answering
 * nothing): one platinum GPU node `nodeId` serving chat model g at 1 USD per million, as of `at`.
 */
export function ghostAnnouncement(nodeId: string, at = Date.now()): Announcement {
  return {
    replicaId: 'ghost',
    at,
    peerUrl: '127.0.0.1:1',
    announceMs: ANNOUNCE_MS,
    nodes: [
      {
        nodeId,
        owner: null,
        tierRank: 4,
        tier: 'platinum',
        role: 'gpu',
        scopes: ['chat'],
        state: 'online',
        load: 0,
        models: [
          {
            modelId: 'g',
            family: 'chat',
            contextLength: 4096,
            maxConcurrency: 8,
            priceIn: '1',
            priceOut: '1',
            currency: 'USD',
          },
        ],
      },
    ],
  };
}
