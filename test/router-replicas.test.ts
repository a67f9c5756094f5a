/**
 * Two coordinator replicas on one PostgreSQL ledger and one Redis, as design.md's "past one
 * machine" runs them: a node connected to replica B serves a paid request sent to replica A, which
 * relays the job over peer-RPC (gRPC) and bills it once. Real sockets, real services, the
 * fixed-reply node for known token counts.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { type NodeDaemon, type NodeDaemonOptions, usdOffer } from '@gpumesh/node/testing';
import { type ChannelCredentials, credentials, Metadata, type ServiceError, status } from '@grpc/grpc-js';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { systemClock } from '../coordinator/src/clock.js';
import { loadConfig } from '../coordinator/src/config.js';
import { PEER_METHODS } from '../coordinator/src/peer/load-peer-proto.js';
import { macPeerCall } from '../coordinator/src/peer/mac-peer-call.js';
import { loadPeerKeys } from '../coordinator/src/peer/peer-keys.js';
import type { InferEvent, PingResponse } from '../coordinator/src/peer/peer-messages.js';
import { type Announcement, sealAnnouncement } from '../coordinator/src/peer/replica-directory.js';
import { signPeerCall } from '../coordinator/src/peer/sign-peer-call.js';
import { expectBooksBalanced } from '../coordinator/src/testing/expect-books-balanced.js';
import { sumOfEntries } from '../coordinator/src/testing/sum-of-entries.js';
import { until } from '../coordinator/src/testing/until.js';
import { estimatePromptTokens } from '../coordinator/src/v1/estimate-prompt-tokens.js';
import { createKeyring } from '../coordinator/src/wallets/keyring.js';
import { newApiClient } from './support/api-client.js';
import { expectedNano, USD } from './support/expected-charge.js';
import {
  ANNOUNCE_MS,
  ghostAnnouncement,
  makeCertificates,
  peerClient,
  type Replica,
  type ReplicaNetwork,
  replicaNetwork,
  startReplica,
  startReplicaNode,
} from './support/replicas.js';
import { testPgUrl, testRedisUrl } from './support/services.js';
import { streamThenLeave } from './support/stream-then-leave.js';

const pgUrl = testPgUrl();
const redisUrl = testRedisUrl();

describe.skipIf(!pgUrl || !redisUrl)('coordinator replicas (PostgreSQL + Redis, peer-RPC)', () => {
  let net: ReplicaNetwork;
  let a: Replica;
  let b: Replica;
  let key: string;
  let userId: string;
  const nodes: NodeDaemon[] = [];

  beforeAll(async () => {
    net = await replicaNetwork(pgUrl!, redisUrl!, 'replicas');
    a = await startReplica(net);
    b = await startReplica(net);
    // The user signs in and makes a key on A; B shares the database, so it knows both.
    ({ key, userId } = await newApiClient(a.app, { keyName: 'r', creditNano: 10n * USD, creditRef: 'seed' }));
  });

  afterAll(async () => {
    for (const node of nodes) node.kill();
    await a?.app.close();
    await b?.app.close();
    // Both replicas bill into one ledger: it adds up at the end (both closed: nothing queued).
    if (a) await expectBooksBalanced(a);
    await a?.store.close();
    await b?.store.close();
    await net?.schema.drop();
  });

  /** A real node daemon (in this process, on its fixed-reply runtime) connected to replica `r`. */
  const nodeOn = (r: Replica, options: Partial<NodeDaemonOptions> = {}) =>
    startReplicaNode(r, nodes, options);

  const chat = (r: Replica, model: string) =>
    post(r, '/v1/chat/completions', { model, messages: [{ role: 'user', content: 'x' }] });
  const post = (r: Replica, path: string, body: Record<string, unknown>) =>
    fetch(`${r.base}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  test('default: a node on replica B serves a paid request sent to replica A, billed once on the shared ledger', async () => {
    const node = await nodeOn(b);
    // A learns of it from B's announcement, and lists it as B does.
    await until(() => a.app.hub.index.node(node.nodeId)?.state === 'online');
    expect(a.app.hub.index.node(node.nodeId)?.via?.peerUrl).toBe(b.peerUrl);
    const models = (await (
      await fetch(`${a.base}/v1/models`, { headers: { authorization: `Bearer ${key}` } })
    ).json()) as { data: { id: string; live_nodes?: number }[] };
    expect(models.data.map((m) => m.id)).toContain('m');

    const before = await a.ledger.balance(userId);
    const res = await post(a, '/v1/chat/completions', {
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
    });
    const text = await res.text();
    expect(res.status, text).toBe(200);
    expect(res.headers.get('x-gpumesh-node')).toBe(node.nodeId);
    const body = JSON.parse(text);
    expect(body.choices[0].message.content).toBe('Hello from a fixed node.');
    expect(body.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 6, total_tokens: 17 });
    expect(node.jobs).toBe(1);

    await a.ledger.idle();
    const cost = expectedNano(11, 6, 1n, 2n);
    expect(body.usage.cost).toBe(Number(cost) / 1e9);
    const after = await a.ledger.balance(userId);
    expect(before.balanceNano - after.balanceNano).toBe(cost);
    const rows = await a.db.selectFrom('usage_records').selectAll().where('user_id', '=', userId).execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.node_id).toBe(node.nodeId);
    expect([Number(rows[0]!.prompt_tokens), Number(rows[0]!.completion_tokens)]).toEqual([11, 6]);
    // The balance is the sum of the user's entries, on the one ledger both replicas write.
    expect(await sumOfEntries(a.db, userId)).toBe(after.balanceNano);
    // The network page of either replica shows the whole network; each replica's nodes gauge counts
    // the nodes connected to it, so the replicas' scrapes add up.
    for (const r of [a, b]) {
      const stats = (await r.app.inject({ method: 'GET', url: '/api/network/stats' })).json() as {
        nodes: { total: number; byRole: Record<string, number> };
      };
      expect(stats.nodes.total).toBe(1);
      expect(Object.keys(stats.nodes.byRole)).not.toContain('unknown');
    }
    const gauge = async (r: Replica) =>
      (
        (await r.app.inject({ method: 'GET', url: '/metrics' })).body.match(
          /^gpumesh_nodes\{[^}]*\} (\d+)$/gm,
        ) ?? []
      )
        .map((line) => Number(line.split(' ').at(-1)))
        .reduce((sum, n) => sum + n, 0);
    expect([await gauge(a), await gauge(b)]).toEqual([0, 1]);
    // No slot stays taken on either side.
    expect([...a.app.hub.index.node(node.nodeId)!.entries.values()][0]!.inflight).toBe(0);
    expect([...b.app.hub.index.node(node.nodeId)!.entries.values()][0]!.inflight).toBe(0);
  });

  test('behavior: a stream relayed through B arrives chunk by chunk, with usage and cost in the last chunk', async () => {
    const res = await post(a, '/v1/chat/completions', {
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(res.status).toBe(200);
    const events = (await res.text())
      .split('\n\n')
      .filter((e) => e.startsWith('data: '))
      .map((e) => e.slice(6));
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
    const content = chunks.map((c) => c.choices?.[0]?.delta?.content ?? '').join('');
    expect(content).toBe('Hello from a fixed node.');
    const last = chunks.at(-1);
    expect(last.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 6 });
    expect(last.usage.cost).toBe(Number(expectedNano(11, 6, 1n, 2n)) / 1e9);
  });

  test('behavior: embeddings go through the relay too', async () => {
    const res = await post(a, '/v1/embeddings', { model: 'e', input: ['one', 'two'] });
    const body = (await res.json()) as { data: { embedding: number[] }[]; usage: { cost: number } };
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.data).toHaveLength(2);
    expect(body.usage.cost).toBeGreaterThan(0);
  });

  test('behavior: the cheaper node serves wherever it is connected; when it leaves, A drops it within the announce period', async () => {
    const cheap = await nodeOn(a, { models: [usdOffer('m', USD / 2n, USD)] });
    await until(() => b.app.hub.index.node(cheap.nodeId)?.state === 'online');
    // B relays to the cheaper node on A.
    const res = await chat(b, 'm');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-gpumesh-node')).toBe(cheap.nodeId);
    expect(cheap.jobs).toBe(1);
    await cheap.stop();
    await until(() => !b.app.hub.index.node(cheap.nodeId), 3 * ANNOUNCE_MS + 2_000);
  });

  test('behavior: a client that leaves a relayed stream cancels the job on B and is billed for what it received', async () => {
    const slow = await nodeOn(b, {
      models: [usdOffer('slow', USD, 2n * USD)],
      replyTokens: Array.from({ length: 200 }, (_, i) => ` t${i}`),
      chunkDelayMs: 10,
      promptTokens: 0,
    });
    await until(() => a.app.hub.index.node(slow.nodeId)?.state === 'online');
    const before = await a.ledger.balance(userId);
    await streamThenLeave(
      `${a.base}/v1/chat/completions`,
      key,
      { model: 'slow', messages: [{ role: 'user', content: 'hi' }], max_tokens: 200 },
      5,
    );
    // The cancel crosses the relay: B cancels the job on the node, and both sides free the slot.
    await until(() => slow.cancelled.length === 1);
    await until(() => a.app.hub.index.node(slow.nodeId)!.entries.get('slow')!.inflight === 0);
    await until(() => b.app.hub.index.node(slow.nodeId)!.entries.get('slow')!.inflight === 0);
    await a.ledger.idle();
    const row = (await a.db.selectFrom('usage_records').selectAll().where('model', '=', 'slow').execute()).at(
      -1,
    )!;
    expect(row.status).toBe('client_disconnected');
    const delivered = Number(row.completion_tokens);
    expect(delivered).toBeGreaterThanOrEqual(5);
    expect(delivered).toBeLessThan(200);
    // The prompt was evaluated: billed at the coordinator's bound (the relay carries no count).
    const promptBound = estimatePromptTokens('chat', { messages: [{ role: 'user', content: 'hi' }] });
    expect(Number(row.prompt_tokens)).toBe(promptBound);
    const after = await a.ledger.balance(userId);
    expect(before.balanceNano - after.balanceNano).toBe(expectedNano(promptBound, delivered, 1n, 2n));
    await slow.stop();
  });

  test('behavior: a replica that cannot be reached fails over to the next node, paid once; a silent replica is dropped after three periods; announcements without the network’s MAC, or stale, are ignored', async () => {
    // A "replica" that only announces (raw Redis): its node is the cheapest, and its peer-RPC
    // address answers nothing.
    const { Redis } = await import('ioredis');
    const redis = new Redis(redisUrl!);
    const ghostNode = privateKeyToAccount(generatePrivateKey()).address;
    // Announcements are sealed with the network's peer key: this test, knowing the master key,
    // plays a replica of the network.
    const { macKey } = await loadPeerKeys(
      a.db,
      createKeyring(Buffer.from(net.masterKey, 'hex')),
      systemClock,
    );
    const channel = `${net.namespace}:replicas`;
    const announce = () => redis.publish(channel, sealAnnouncement(ghostAnnouncement(ghostNode), macKey));
    // Ignored, not fatal: malformed text, a valid announcement without the network's MAC (anyone
    // who can write to Redis), one sealed with another key, and a genuine one replayed later.
    const forged = privateKeyToAccount(generatePrivateKey()).address;
    await redis.publish(channel, 'not json');
    await redis.publish(channel, JSON.stringify(ghostAnnouncement(forged)));
    await redis.publish(channel, sealAnnouncement(ghostAnnouncement(forged), randomBytes(32)));
    await redis.publish(channel, sealAnnouncement(ghostAnnouncement(forged, Date.now() - 120_000), macKey));
    await redis.publish(
      channel,
      sealAnnouncement({ ...ghostAnnouncement(forged), nodes: [] } as Announcement, macKey).replace(
        '"nodes":[]',
        '"nodes":[{"nodeId":1}]',
      ),
    );
    await announce();
    await until(() => a.app.hub.index.node(ghostNode)?.via?.replicaId === 'ghost');
    expect(a.app.hub.index.node(forged)).toBeUndefined();
    const local = await nodeOn(a, { models: [usdOffer('g', 3n * USD, 3n * USD)], promptTokens: 5 });
    await until(() => a.app.hub.index.node(local.nodeId)?.state === 'online');
    await announce();
    const before = await a.ledger.balance(userId);
    const res = await chat(a, 'g');
    expect(res.status, await res.clone().text()).toBe(200);
    expect(res.headers.get('x-gpumesh-node')).toBe(local.nodeId);
    await a.ledger.idle();
    const after = await a.ledger.balance(userId);
    expect(before.balanceNano - after.balanceNano).toBe(expectedNano(5, 6, 3n, 3n));
    // The ghost stops announcing: kept for three periods, then dropped.
    await announce();
    await new Promise((r) => setTimeout(r, 1.5 * ANNOUNCE_MS));
    expect(a.app.hub.index.node(ghostNode)).toBeDefined();
    await until(() => !a.app.hub.index.node(ghostNode), 3_000);
    expect(a.app.hub.index.node(local.nodeId)).toBeDefined();
    await local.stop();
    redis.disconnect();
  });

  test('errors: a peer-RPC call signed by a stranger, one with a MAC under another secret, and one not signed are refused', async () => {
    const client = peerClient(b.peerUrl, credentials.createInsecure());
    const ping = (metadata: Metadata) =>
      new Promise<ServiceError | PingResponse>((resolve) =>
        client.Ping({ ts: 1 }, metadata, (error, response) => resolve(error ?? response!)),
      );
    const stranger = privateKeyToAccount(generatePrivateKey());
    const refused = (await ping(await signPeerCall(PEER_METHODS.Ping, stranger))) as ServiceError;
    expect(refused.code).toBe(status.PERMISSION_DENIED);
    const unsigned = (await ping(new Metadata())) as ServiceError;
    expect(unsigned.code).toBe(status.UNAUTHENTICATED);
    // A MAC under any other secret than the replicas' shared one.
    const forged = (await ping(
      macPeerCall(PEER_METHODS.Ping, stranger.address, randomBytes(32)),
    )) as ServiceError;
    expect(forged.code).toBe(status.UNAUTHENTICATED);
    // A stranger cannot make B's node run a job either: the node sees no job.
    const node = nodes[0]!;
    const jobsBefore = node.jobs;
    const stream = client.Infer(
      {
        job_id: 'x',
        kind: 'chat',
        model: 'm',
        request_json: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }),
        stream: false,
        timeout_ms: 1_000,
        node_id: node.nodeId,
      },
      await signPeerCall(PEER_METHODS.Infer, stranger),
    );
    const error = await new Promise<ServiceError>((resolve) => {
      stream.on('error', resolve);
      stream.on('data', (_: InferEvent) => {});
    });
    expect(error.code).toBe(status.PERMISSION_DENIED);
    expect(node.jobs).toBe(jobsBefore);
    client.close();
  });

  test('behavior: a node that moves from B to A is local on A and relayed by B, with no stale copy on either', async () => {
    const key = generatePrivateKey();
    const models = [usdOffer('moving', USD, USD)];
    const onB = await nodeOn(b, { privateKey: key, models });
    await until(() => a.app.hub.index.node(onB.nodeId)?.via?.peerUrl === b.peerUrl);
    onB.kill(); // gone without a word: B sees it at its TTL, or the new session replaces it
    const onA = await nodeOn(a, { privateKey: key, models });
    expect(onA.nodeId).toBe(onB.nodeId);
    await until(
      () => a.app.hub.session(onA.nodeId)?.ready === true && !a.app.hub.index.node(onA.nodeId)?.via,
    );
    await until(() => b.app.hub.index.node(onA.nodeId)?.via?.peerUrl === a.peerUrl, 15_000);
    // B's own announcements no longer claim it, so A keeps it local.
    await new Promise((r) => setTimeout(r, 3 * ANNOUNCE_MS));
    expect(a.app.hub.index.node(onA.nodeId)?.via).toBeUndefined();
    const res = await chat(b, 'moving');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-gpumesh-node')).toBe(onA.nodeId);
    expect(onA.jobs).toBe(1);
    await onA.stop();
  });

  test('behavior: with mutual TLS, replicas relay to each other; a plaintext caller or one without the network CA’s certificate cannot connect', async () => {
    const certs = makeCertificates();
    const tls = { tlsCert: certs.cert, tlsKey: certs.key, tlsCa: certs.ca };
    const ns = `gmtest-tls-${randomBytes(4).toString('hex')}`;
    const c = await startReplica(net, tls, ns);
    const d = await startReplica(net, tls, ns);
    try {
      const node = await nodeOn(d, { models: [usdOffer('tls', USD, USD)] });
      await until(() => c.app.hub.index.node(node.nodeId)?.state === 'online');
      const res = await chat(c, 'tls');
      expect(res.status, await res.clone().text()).toBe(200);
      expect(res.headers.get('x-gpumesh-node')).toBe(node.nodeId);
      expect(node.jobs).toBe(1);

      const ping = (channel: ChannelCredentials) =>
        new Promise<ServiceError | PingResponse>((resolve) => {
          const client = peerClient(d.peerUrl, channel);
          client.Ping({ ts: 1 }, new Metadata(), { deadline: Date.now() + 2_000 }, (error, value) => {
            client.close();
            resolve(error ?? value!);
          });
        });
      expect(((await ping(credentials.createInsecure())) as ServiceError).code).toBe(status.UNAVAILABLE);
      // TLS that trusts the server, but shows no client certificate.
      const noClientCert = (await ping(credentials.createSsl(readFileSync(certs.ca)))) as ServiceError;
      expect(noClientCert.code).toBe(status.UNAVAILABLE);
      await node.stop();
    } finally {
      await c.app.close();
      await d.app.close();
      await c.store.close();
      await d.store.close();
    }
  });

  test('behavior: a replica that closes is forgotten at once, with its nodes', async () => {
    const node = nodes[0]!;
    expect(a.app.hub.index.node(node.nodeId)).toBeDefined();
    await b.app.close();
    await until(() => !a.app.hub.index.node(node.nodeId), 2_000);
    // The model was served a moment ago: an outage, retryable (503), not an unknown model.
    const res = await chat(a, 'm');
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('no_provider_available');
  });
});

describe('coordinator replicas: configuration', () => {
  test('errors: peer.port without PostgreSQL and Redis, or TLS without all three files, is a configuration error naming the setting', () => {
    const base = { masterKey: randomBytes(32).toString('hex'), logLevel: 'silent' };
    expect(() => loadConfig({ overrides: { ...base, peer: { port: 0 } } })).toThrow(
      expect.objectContaining({ code: 'invalid_config', param: 'peer.port' }),
    );
    const stores = { databaseUrl: 'postgres://127.0.0.1/x', redisUrl: 'redis://127.0.0.1' };
    expect(() =>
      loadConfig({
        overrides: { ...base, ...stores, peer: { port: 0, tlsCert: '/a.pem', tlsKey: '/a.key' } },
      }),
    ).toThrow(expect.objectContaining({ code: 'invalid_config', param: 'peer.tlsCert' }));
    // Together, they load.
    expect(loadConfig({ overrides: { ...base, ...stores, peer: { port: 0 } } }).peer.port).toBe(0);
  });
});
