/**
 * A GPU owner's earnings (issue 19, first part): a real node daemon serves paid requests before it
 * is linked to an owner — its earnings go to its own provider account — then reconnects with its
 * owner's proof: the link is recorded and those earnings move to the owner's account in one ledger
 * transaction. The owner, signed in with that wallet, sees the node, its jobs, tokens and earnings,
 * and the balance a payout can send. On SQLite and PostgreSQL; the books balance.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startNodeDaemon, usdOffer } from '@gpumesh/node/testing';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { providerAccountId } from '../coordinator/src/db/tables/ledger.js';
import { HUB_PATH } from '../coordinator/src/hub/hub-plugin.js';
import { credit } from '../coordinator/src/ledger/credit.js';
import {
  createTestApp,
  expectBooksBalanced,
  signIn,
  type TestApp,
  testBackends,
} from '../coordinator/src/testing/index.js';
import { until } from '../coordinator/src/testing/until.js';

const USD = 1_000_000_000n;
const run = promisify(execFile);
const BIN = path.resolve(import.meta.dirname, '../node/bin/gpumesh-node.js');

describe.each(testBackends())('provider earnings [$name]', (backend) => {
  let t: TestApp;
  let base: string;
  let key: string;

  beforeAll(async () => {
    t = await createTestApp(backend, { label: 'provider' });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    const jwt = await signIn(t.app, privateKeyToAccount(generatePrivateKey()));
    const headers = { authorization: `Bearer ${jwt}` };
    const user = (await t.app.inject({ method: 'GET', url: '/api/user', headers })).json() as { id: string };
    key = (
      (
        await t.app.inject({ method: 'POST', url: '/api/router/keys', headers, payload: { name: 'p' } })
      ).json() as {
        key: string;
      }
    ).key;
    await credit(t.db, { userId: user.id, amountNano: 10n * USD, ref: `provider-seed-${backend.name}` });
  }, 60_000);

  afterAll(async () => {
    if (t) await expectBooksBalanced(t.app.ctx);
    await t?.close();
  });

  const chat = () =>
    fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }),
    });

  test('behavior: earnings made before the owner link move to the owner; the owner sees the node and its figures', async () => {
    const nodeKey = generatePrivateKey();
    const nodeId = privateKeyToAccount(nodeKey).address;
    const ownerKey = generatePrivateKey();
    const owner = privateKeyToAccount(ownerKey);
    const url = `${base.replace('http', 'ws')}${HUB_PATH}`;
    const models = [usdOffer('m', USD, 2n * USD)];

    // Unlinked: its earnings go to its own provider account.
    const unlinked = await startNodeDaemon({
      url,
      models,
      privateKey: nodeKey,
      promptTokens: 10,
      replyTokens: ['a', 'b'],
    });
    await until(() => t.app.hub.index.pick({ modelId: 'm' }).ok, 10_000);
    for (let i = 0; i < 3; i++) expect((await chat()).status).toBe(200);
    await t.app.ctx.ledger.idle();
    const stranded = (await t.app.ctx.ledger.balance(providerAccountId(nodeId))).balanceNano;
    expect(stranded).toBeGreaterThan(0n);
    unlinked.kill();
    await until(() => !t.app.hub.index.pick({ modelId: 'm' }).ok, 20_000);

    // The same node, now with its owner's proof: linked, and the earnings follow.
    const linked = await startNodeDaemon({
      url,
      models,
      privateKey: nodeKey,
      ownerPrivateKey: ownerKey,
      promptTokens: 10,
      replyTokens: ['a', 'b'],
    });
    await until(
      async () => (await t.app.ctx.ledger.balance(providerAccountId(owner.address))).balanceNano === stranded,
      10_000,
    );
    expect((await t.app.ctx.ledger.balance(providerAccountId(nodeId))).balanceNano).toBe(0n);
    expect((await chat()).status).toBe(200);
    await t.app.ctx.ledger.idle();
    const total = (await t.app.ctx.ledger.balance(providerAccountId(owner.address))).balanceNano;
    expect(total).toBeGreaterThan(stranded);

    // A minute passes with the node connected (the app's clock is the test's).
    t.clock.advance(60_000);
    // The owner's view.
    const jwt = await signIn(t.app, owner);
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/provider/nodes',
      headers: { authorization: `Bearer ${jwt}` },
    });
    expect(res.statusCode).toBe(200);
    const body = res.json() as {
      balance: number;
      nodes: {
        nodeId: string;
        live: boolean;
        jobs: number;
        tokens: { prompt: number };
        earnings: { total: number; today: number };
      }[];
    };
    expect(body.balance).toBe(Number(total) / 1e9);
    expect(body.nodes).toHaveLength(1);
    expect(body.nodes[0]).toMatchObject({ nodeId, live: true, jobs: 4, tokens: { prompt: 40 } });
    expect(body.nodes[0]!.earnings.total).toBe(Number(total) / 1e9);
    // Connected twice, back to back, since it was first seen a minute ago: up all that time (uptime
    // counts from first seen, not over the whole day); first-token times and throughput from the
    // usage rows.
    const figures = body.nodes[0] as unknown as {
      uptime: { last24h: number; last7Days: number };
      medians: { ttftMs: number | null; tokensPerSecond: number | null };
    };
    expect(figures.uptime.last24h).toBeGreaterThan(0.99);
    expect(figures.uptime.last24h).toBeLessThanOrEqual(1);
    expect(figures.uptime.last7Days).toBe(figures.uptime.last24h);
    expect(figures.medians.ttftMs).toBeGreaterThanOrEqual(0);
    expect(figures.medians.tokensPerSecond).toBeGreaterThan(0);
    const byModel = await t.app.inject({
      method: 'GET',
      url: '/api/provider/earnings?by=model',
      headers: { authorization: `Bearer ${jwt}` },
    });
    expect(byModel.json()).toMatchObject({
      by: 'model',
      rows: [{ key: 'm', jobs: 4, earnings: Number(total) / 1e9 }],
    });
    // Anyone (the node's own `status`) reads its public figures: the total it earned, in USD.
    const pub = await t.app.inject({ url: `/api/network/nodes/${nodeId.toLowerCase()}` });
    expect(pub.json()).toMatchObject({
      nodeId,
      live: true,
      linked: true,
      jobs: 4,
      earnings: { total: Number(total) / 1e9, unit: 'USD' },
    });
    expect((await t.app.inject({ url: '/api/network/nodes/nope' })).statusCode).toBe(400);
    // Another wallet sees none of it.
    const stranger = await signIn(t.app, privateKeyToAccount(generatePrivateKey()));
    const none = await t.app.inject({
      method: 'GET',
      url: '/api/provider/nodes',
      headers: { authorization: `Bearer ${stranger}` },
    });
    expect(none.json()).toMatchObject({ balance: 0, nodes: [] });
    linked.kill();
  }, 60_000);

  test('behavior: linked from the dashboard with the node key’s consent: earnings follow, and the next connection is the owner’s', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'gm-link-'));
    try {
      const nodeKey = generatePrivateKey();
      const nodeId = privateKeyToAccount(nodeKey).address;
      const owner = privateKeyToAccount(generatePrivateKey());
      const url = `${base.replace('http', 'ws')}${HUB_PATH}`;
      const models = [usdOffer('m', USD, 2n * USD)];
      const first = await startNodeDaemon({
        url,
        models,
        privateKey: nodeKey,
        promptTokens: 10,
        replyTokens: ['a'],
      });
      await until(() => t.app.hub.index.node(nodeId)?.state === 'online', 10_000);
      expect((await chat()).status).toBe(200);
      await t.app.ctx.ledger.idle();
      const stranded = (await t.app.ctx.ledger.balance(providerAccountId(nodeId))).balanceNano;
      expect(stranded).toBeGreaterThan(0n);

      // The operator's consent, from the real command (its key file written where the CLI reads it).
      const stateDir = path.join(dir, 'state');
      mkdirSync(stateDir, { recursive: true });
      writeFileSync(path.join(stateDir, 'node.key'), `${nodeKey}\n`, { mode: 0o600 });
      const { stdout } = await run(process.execPath, [
        BIN,
        'link',
        '--owner',
        owner.address,
        '--json',
        '--state-dir',
        stateDir,
      ]);
      const consent = JSON.parse(stdout) as { nodeId: string; nodeSignature: string };
      expect(consent.nodeId).toBe(nodeId);

      const jwt = await signIn(t.app, owner);
      const link = (payload: Record<string, unknown>, token = jwt) =>
        t.app.inject({
          method: 'POST',
          url: '/api/provider/nodes/link',
          headers: { authorization: `Bearer ${token}` },
          payload,
        });
      // Someone else can't use that consent: it names this owner.
      const thief = await signIn(t.app, privateKeyToAccount(generatePrivateKey()));
      const stolen = await link({ nodeId, nodeSignature: consent.nodeSignature }, thief);
      expect(stolen.statusCode).toBe(400);
      expect(stolen.json()).toMatchObject({ error: { code: 'invalid_request', param: 'nodeSignature' } });
      const linked = await link({ nodeId, nodeSignature: consent.nodeSignature });
      expect(linked.statusCode).toBe(200);
      expect(linked.json()).toMatchObject({
        owner: owner.address.toLowerCase(),
        movedEarnings: Number(stranded) / 1e9,
      });
      // Repeated: nothing left to move.
      expect((await link({ nodeId, nodeSignature: consent.nodeSignature })).json()).toMatchObject({
        movedEarnings: 0,
      });
      expect((await t.app.ctx.ledger.balance(providerAccountId(nodeId))).balanceNano).toBe(0n);

      // At its next connection, with no owner flags, the node is the owner's: its earnings go there.
      first.kill();
      await until(() => t.app.hub.index.node(nodeId) === undefined, 20_000);
      const again = await startNodeDaemon({
        url,
        models,
        privateKey: nodeKey,
        promptTokens: 10,
        replyTokens: ['a'],
      });
      await until(
        () => t.app.hub.index.node(nodeId)?.owner?.toLowerCase() === owner.address.toLowerCase(),
        10_000,
      );
      expect((await chat()).status).toBe(200);
      await t.app.ctx.ledger.idle();
      expect((await t.app.ctx.ledger.balance(providerAccountId(nodeId))).balanceNano).toBe(0n);
      expect((await t.app.ctx.ledger.balance(providerAccountId(owner.address))).balanceNano).toBeGreaterThan(
        stranded,
      );
      again.kill();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
