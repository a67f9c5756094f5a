/**
 * A GPU owner's earnings (issue 19, first part): a real node daemon serves paid requests before it
 * is linked to an owner — its earnings go to its own provider account — then reconnects with its
 * owner's proof: the link is recorded and those earnings move to the owner's account in one ledger
 * transaction. The owner, signed in with that wallet, sees the node, its jobs, tokens and earnings,
 * and the balance a payout can send. On SQLite and PostgreSQL; the books balance.
 */
import type { AddressInfo } from 'node:net';
import { startNodeDaemon, usdOffer } from '@gpumesh/node/testing';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { HUB_PATH } from '../coordinator/src/hub/hub-plugin.js';
import { credit } from '../coordinator/src/ledger/credit.js';
import { providerAccountId } from '../coordinator/src/ledger/tables.js';
import {
  createTestApp,
  expectBooksBalanced,
  signIn,
  type TestApp,
  testBackends,
} from '../coordinator/src/testing/index.js';
import { until } from '../coordinator/src/testing/until.js';

const USD = 1_000_000_000n;

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
    const byModel = await t.app.inject({
      method: 'GET',
      url: '/api/provider/earnings?by=model',
      headers: { authorization: `Bearer ${jwt}` },
    });
    expect(byModel.json()).toMatchObject({
      by: 'model',
      rows: [{ key: 'm', jobs: 4, earnings: Number(total) / 1e9 }],
    });
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
});
