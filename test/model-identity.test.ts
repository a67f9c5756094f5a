/**
 * Model identity (NODE_PROTOCOL.md "Model identity", coordinator/src/catalog): three real
 * gpumesh-node daemons, each its own process on node-llama-cpp. Two serve the same generated GGUF
 * under different file names and prices: the catalog knows its SHA-256, so both are listed under
 * one canonical id with two live nodes, and the cheaper one serves. The third serves a GGUF the
 * catalog does not know (another seed): it is routed only under its node-scoped id.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { writeTinyModel } from '@gpumesh/node';
import { type SpawnedNodeDaemon, spawnNodeDaemon } from '@gpumesh/node/testing';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { HUB_PATH } from '../coordinator/src/hub/hub-plugin.js';
import { credit } from '../coordinator/src/ledger/credit.js';
import {
  createTestApp,
  expectBooksBalanced,
  signIn,
  type TestApp,
  testBackends,
} from '../coordinator/src/testing/index.js';

const USD = 1_000_000_000n;
const TINY = 'gpumesh/tiny-chat';
const sqlite = testBackends().find((b) => b.name === 'sqlite')!;

describe('model identity: one id per weights, node-scoped ids for unknown weights', () => {
  let t: TestApp;
  let base: string;
  let key: string;
  const nodes: SpawnedNodeDaemon[] = [];
  const dir = mkdtempSync(path.join(tmpdir(), 'gm-identity-'));

  /** A daemon in `dir/<name>` serving `file` at `usdPerM` USD per million tokens in and out. */
  function node(name: string, source: string, file: string, usdPerM: number) {
    const home = path.join(dir, name);
    mkdirSync(path.join(home, 'models'), { recursive: true });
    copyFileSync(source, path.join(home, 'models', file));
    const price = String(BigInt(usdPerM) * USD);
    const config = path.join(home, 'config.json');
    writeFileSync(
      config,
      JSON.stringify({ price: { currency: 'USD', inputPerMTok: price, outputPerMTok: price } }),
    );
    nodes.push(
      spawnNodeDaemon({
        coordinator: `${base.replace('http', 'ws')}${HUB_PATH}`,
        dir: home,
        args: ['--config', config],
      }),
    );
  }

  beforeAll(async () => {
    t = await createTestApp(sqlite, { label: 'identity' });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    const jwt = await signIn(t.app, privateKeyToAccount(generatePrivateKey()));
    const headers = { authorization: `Bearer ${jwt}` };
    const user = (await t.app.inject({ method: 'GET', url: '/api/user', headers })).json() as { id: string };
    key = (
      (
        await t.app.inject({ method: 'POST', url: '/api/router/keys', headers, payload: { name: 'i' } })
      ).json() as {
        key: string;
      }
    ).key;
    await credit(t.db, { userId: user.id, amountNano: 10n * USD, ref: 'identity-seed' });
    const known = path.join(dir, 'known.gguf');
    const unknown = path.join(dir, 'unknown.gguf');
    await writeTinyModel({ path: known });
    await writeTinyModel({ path: unknown, seed: 7 });
    node('dear', known, 'alpha.gguf', 2);
    node('cheap', known, 'beta-q8.gguf', 1);
    node('own', unknown, 'mine.gguf', 1);
    await vi.waitFor(
      () => {
        const offers = t.app.hub.index.offers(TINY);
        const scoped = [...t.app.hub.index.models()].find(([id]) => id.endsWith('/mine'));
        const online = offers && [...offers.values()].every((e) => e.node.state === 'online');
        if (offers?.size !== 2 || !online || !scoped) throw new Error('the nodes are not online yet');
      },
      { timeout: 90_000, interval: 50 },
    );
  }, 120_000);

  afterAll(async () => {
    await Promise.all(nodes.map((n) => n.stop()));
    if (t) await expectBooksBalanced(t.app.ctx);
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const get = (url: string) => fetch(`${base}${url}`, { headers: { authorization: `Bearer ${key}` } });
  const chat = (model: string) =>
    fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 }),
    });

  test('behavior: the same GGUF under two file names is one model with two live nodes; the cheaper serves', async () => {
    const models = (await (await get('/v1/models')).json()) as {
      data: { id: string; live_nodes?: number; verified_nodes?: number; probation_nodes?: number }[];
    };
    const tiny = models.data.filter((m) => m.id === TINY);
    expect(tiny).toHaveLength(1);
    // Two nodes, neither verified yet (no verifier here): both serve, both on probation.
    expect(tiny[0]).toMatchObject({ live_nodes: 2, verified_nodes: 0, probation_nodes: 2 });
    // Not listed under the names the owners gave their files.
    expect(models.data.map((m) => m.id)).not.toContain('alpha');
    expect(models.data.map((m) => m.id)).not.toContain('beta-q8');
    const cheapest = [...t.app.hub.index.offers(TINY)!.values()].sort((a, b) =>
      a.priceInNano < b.priceInNano ? -1 : 1,
    )[0]!;
    const res = await chat(TINY);
    expect(res.status, await res.clone().text()).toBe(200);
    expect(res.headers.get('x-gpumesh-node')).toBe(cheapest.node.nodeId);
    // The node is asked for its own name of the model, and answers under the canonical one.
    expect(((await res.json()) as { model: string }).model).toBe(TINY);
    expect((await chat('beta-q8')).status).toBe(404);
  });

  test('behavior: a GGUF the catalog does not know is routed only under its node-scoped id', async () => {
    const scopedId = [...t.app.hub.index.models()].map(([id]) => id).find((id) => id.endsWith('/mine'))!;
    const owner = [...t.app.hub.index.offers(scopedId)!.values()][0]!.node.nodeId;
    expect(scopedId).toBe(`${owner.toLowerCase()}/mine`);
    expect((await chat('mine')).status).toBe(404);
    const res = await chat(scopedId);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-gpumesh-node')).toBe(owner);
  });

  test('default: the catalog is public and lists the generated model’s file with its SHA-256', async () => {
    const res = await fetch(`${base}/api/models/catalog`);
    expect(res.status).toBe(200);
    const catalog = (await res.json()) as { models: { id: string; files: { sha256: string }[] }[] };
    expect(catalog.models.find((m) => m.id === TINY)?.files[0]?.sha256).toMatch(/^[0-9a-f]{64}$/);
  });
});
