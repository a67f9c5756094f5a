/**
 * Between whole lists a replica announces only what changed (coordinator/src/peer/replica-directory.ts):
 * a change list is applied on top of the announcement before it only; after a gap the receiver waits
 * for the next whole list. Played by a "ghost" replica writing raw announcements on Redis, sealed
 * with the network's peer key, to one real replica on PostgreSQL + Redis.
 */
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { systemClock } from '../coordinator/src/clock.js';
import { loadPeerKeys } from '../coordinator/src/peer/peer-keys.js';
import { type Announcement, sealAnnouncement } from '../coordinator/src/peer/replica-directory.js';
import { until } from '../coordinator/src/testing/until.js';
import { createKeyring } from '../coordinator/src/wallets/keyring.js';
import {
  ghostAnnouncement,
  type Replica,
  type ReplicaNetwork,
  replicaNetwork,
  startReplica,
} from './support/replicas.js';
import { testPgUrl, testRedisUrl } from './support/services.js';

const pgUrl = testPgUrl();
const redisUrl = testRedisUrl();

describe.skipIf(!pgUrl || !redisUrl)('replica announcements: whole lists and change lists', () => {
  let net: ReplicaNetwork;
  let a: Replica;

  beforeAll(async () => {
    net = await replicaNetwork(pgUrl!, redisUrl!, 'deltas');
    a = await startReplica(net);
  });

  afterAll(async () => {
    await a?.app.close();
    await a?.store.close();
    await net?.schema.drop();
  });

  test('default: changes apply in order; after a gap they wait for the next whole list', async () => {
    const { Redis } = await import('ioredis');
    const redis = new Redis(redisUrl!);
    const { macKey } = await loadPeerKeys(
      a.db,
      createKeyring(Buffer.from(net.masterKey, 'hex')),
      systemClock,
    );
    const channel = `${net.namespace}:replicas`;
    const [x, y, z, w] = [0, 1, 2, 3].map(() => privateKeyToAccount(generatePrivateKey()).address);
    const nodeOf = (nodeId: string, state = 'online') => ({ ...ghostAnnouncement(nodeId).nodes[0]!, state });
    const send = (announcement: Partial<Announcement>) =>
      redis.publish(channel, sealAnnouncement({ ...ghostAnnouncement(x!), ...announcement }, macKey));
    const index = a.app.hub.index;

    await send({ seq: 1, nodes: [nodeOf(x!), nodeOf(y!)] });
    await until(() => index.node(x!) !== undefined && index.node(y!) !== undefined);
    // A change list: y drains, z comes, x leaves.
    await send({ seq: 2, delta: true, removed: [x!], nodes: [nodeOf(y!, 'draining'), nodeOf(z!)] });
    await until(() => index.node(z!) !== undefined);
    expect(index.node(x!)).toBeUndefined();
    expect(index.node(y!)?.state).toBe('draining');
    // Announcement 3 was lost: 4 is not applied, nor anything after it until a whole list. (A second
    // ghost's announcement, on the same channel after them, shows they were handled.)
    await send({ seq: 4, delta: true, removed: [z!], nodes: [nodeOf(x!)] });
    await send({ seq: 5, delta: true, removed: [], nodes: [nodeOf(y!, 'online')] });
    await send({ replicaId: 'ghost-2', seq: 1, nodes: [nodeOf(w!)] });
    await until(() => index.node(w!) !== undefined);
    expect(index.node(z!)).toBeDefined();
    expect(index.node(x!)).toBeUndefined();
    expect(index.node(y!)?.state).toBe('draining');
    await send({ seq: 6, nodes: [nodeOf(x!), nodeOf(y!, 'busy')] });
    await until(() => index.node(y!)?.state === 'busy');
    expect(index.node(x!)).toBeDefined();
    expect(index.node(z!)).toBeUndefined(); // the whole list does not name it
    // And the changes after it apply again.
    await send({ seq: 7, delta: true, removed: [y!], nodes: [] });
    await until(() => index.node(y!) === undefined);
    redis.disconnect();
  });
});
