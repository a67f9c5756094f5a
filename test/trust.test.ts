/**
 * Verification end to end, with real gpumesh-node daemons on node-llama-cpp (CPU) and two generated
 * models of the same shape, different seeds and a sharper output layer (outputStd 0.5):
 * - an honest node serves model A;
 * - a liar serves model B's weights while claiming A's hash (it edited its hash cache, the way a
 *   real cheat would), so it is listed under A's catalog id next to the honest node;
 * - a `network` node (silver tier) holds A and verifies.
 * Canaries to both: the liar is suspended, told why and disconnected within a few canaries, and
 * refused when it reconnects; its owner's stake (in the staking pool, on anvil) is slashed by
 * trust.slashBps into the pool's rewards, its Slashed event naming the sha256 of the evidence the
 * coordinator serves; the honest node is never flagged. On SQLite; the books balance.
 */

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { writeTinyModel } from '@gpumesh/node';
import { spawnNodeDaemon } from '@gpumesh/node/testing';
import { signOwnerProof } from '@gpumesh/protocol';
import { parseEther } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createChainServices } from '../coordinator/src/chain/create-chain-services.js';
import { reconcile } from '../coordinator/src/reconcile/reconcile.js';
import { signIn, until } from '../coordinator/src/testing/index.js';
import type { CanaryOutcome } from '../coordinator/src/trust/checks/canary-runner.js';
import { startLocalVerifier } from '../coordinator/src/trust/checks/local-verifier.js';
import { newApiClient } from './support/api-client.js';
import { expectSlashEvidence } from './support/expect-slash-evidence.js';
import { USD } from './support/expected-charge.js';
import { MODEL, startTrustNetwork, type TrustNetwork } from './support/trust-network.js';

describe('verification: canaries catch a node serving other weights', () => {
  let net: TrustNetwork;
  beforeAll(async () => {
    net = await startTrustNetwork();
  }, 180_000);
  afterAll(() => net?.close());

  test('behavior: the liar is listed under the claimed id, then suspended by canaries; the honest node passes every one', async () => {
    const { db, app, devnet, daemons, ids, liarOwner, liarJwt, balance, shaOfA, pairFor } = net;
    // Both compete under A's catalog id.
    expect(pairFor(ids.honest)?.target.offer.modelId).toBe(MODEL);
    expect(pairFor(ids.liar)?.target.offer.modelId).toBe(MODEL);
    expect(pairFor(ids.honest)?.verifier).toMatchObject({ node: { nodeId: ids.verifier } });

    // 12 verified canaries to the honest node (one the coordinator could not place on a loaded
    // machine is skipped, not judged: at most a few).
    const honest: CanaryOutcome[] = [];
    let skipped = 0;
    while (honest.length < 12 && skipped < 6) {
      const pair = pairFor(ids.honest)!;
      const outcome = await app.canaries.runOnce(pair.target, { verifier: pair.verifier });
      if (outcome.status === 'skipped') skipped++;
      else honest.push(outcome);
    }
    expect(honest).toHaveLength(12);
    expect(honest.filter((o) => !(o.status === 'verified' && o.judgement.passed))).toEqual([]);
    const last = honest.at(-1) as Extract<CanaryOutcome, { status: 'verified' }>;
    expect(last.standing.status).toBe('trusted');

    let canaries = 0;
    let outcome: CanaryOutcome | undefined;
    for (let attempts = 0; pairFor(ids.liar) && canaries < 20 && attempts < 30; attempts++) {
      const pair = pairFor(ids.liar)!;
      outcome = await app.canaries.runOnce(pair.target, { verifier: pair.verifier });
      if (outcome.status === 'verified') canaries++;
    }
    expect(outcome).toMatchObject({ status: 'verified', standing: { status: 'suspended' } });
    // No single check convicts; a liar whose answers ran short may need a third or fourth.
    expect(canaries).toBeGreaterThanOrEqual(2);
    expect(canaries).toBeLessThanOrEqual(4);
    console.log(`trust: the liar was suspended after ${canaries} canaries; the honest node passed 12 of 12`);
    // Disconnected, out of routing; refused (and stopped) when it reconnects.
    await until(() => app.hub.index.node(ids.liar) === undefined, 10_000);
    const liar = daemons[1]!;
    await until(() => liar.process.exitCode !== null, 30_000);
    expect(liar.stderr()).toMatch(/suspended/);
    const rows = await db.db
      .selectFrom('verifications')
      .selectAll()
      .where('node_id', '=', ids.liar.toLowerCase())
      .execute();
    expect(rows).toHaveLength(canaries);
    expect(rows.filter((r) => Number(r.passed) === 0).length).toBeGreaterThanOrEqual(2);
    const standing = await db.db
      .selectFrom('node_trust')
      .selectAll()
      .where('node_id', '=', ids.liar.toLowerCase())
      .executeTakeFirstOrThrow();
    expect(standing.reason).toContain('were not sampled from those weights');
    expect(standing.reason).toContain(String(rows[0]!.job_id));
    // The owner's stake is slashed by exactly 15 % in the staking pool, with the evidence.
    const stakeOf = async () =>
      (
        await app.inject({
          method: 'POST',
          url: '/tx',
          payload: { method: 'chain_getStake', params: [liarOwner.address] },
        })
      ).json() as { stake: { quantity: string } };
    const slashRow = () => db.db.selectFrom('slashes').selectAll().executeTakeFirst();
    await until(async () => (await slashRow())?.status === 'sent', 30_000);
    const slash = (await slashRow())!;
    expect(slash).toMatchObject({ node_id: ids.liar.toLowerCase(), amount_wei: parseEther('15').toString() });
    expect((await stakeOf()).stake.quantity).toBe('85.0000 TOK');
    // The cut stays in the pool, in its rewards; the pool named the evidence's sha256, served here.
    expect(await balance(devnet.stakingPool)).toBe(net.poolAfterStake.balance);
    expect(await net.rewardsPool()).toBe(net.poolAfterStake.rewardsPool + parseEther('15'));
    await expectSlashEvidence(app, devnet, slash);
    const event = await db.db
      .selectFrom('stake_events')
      .selectAll()
      .where('kind', '=', 'slash')
      .executeTakeFirstOrThrow();
    expect(event).toMatchObject({ amount_wei: parseEther('15').toString(), tx_hash: slash.tx_hash });
    const evidence = JSON.parse(event.evidence!) as { sha256: string; verifications: { jobId: string }[] };
    expect(evidence.sha256).toBe(shaOfA);
    // The evidence names every check that counted against it.
    expect(evidence.verifications.map((v) => v.jobId).sort()).toEqual(
      rows
        .filter((r) => Number(r.evidence_e4) > 0)
        .map((r) => r.job_id)
        .sort(),
    );
    // The owner sees the node's verification history and the slash; /network shows the suspension.
    const mine = (
      await app.inject({ url: '/api/provider/nodes', headers: { authorization: `Bearer ${liarJwt}` } })
    ).json() as {
      nodes: {
        trust: { status: string; failed: number; lastCheckAt: string | null; lastFailure: unknown };
        verifications: { passed: boolean; jobId: string; source: string }[];
        slashes: { amount: string; txHash: string; evidence: { verifications: unknown[] } }[];
      }[];
    };
    expect(mine.nodes).toHaveLength(1);
    const liarView = mine.nodes[0]!;
    expect(liarView.trust).toMatchObject({
      status: 'suspended',
      failed: rows.filter((r) => Number(r.passed) === 0).length,
      lastCheckAt: expect.any(String),
      lastFailure: { at: expect.any(String), reason: expect.any(String) },
    });
    expect(liarView.verifications.map((v) => v.source)).toEqual(rows.map(() => 'canary'));
    expect(liarView.slashes).toEqual([
      expect.objectContaining({
        amount: '15',
        txHash: slash.tx_hash,
        evidence: expect.objectContaining({ sha256: shaOfA }),
        evidenceHash: slash.evidence_hash,
        evidenceUrl: `/api/evidence/${slash.evidence_hash}`,
      }),
    ]);
    const stats = (await app.inject({ url: '/api/network/stats' })).json() as {
      suspensions: { nodeId: string; slashed: string | null; reason: string }[];
      nodeList: { nodeId: string; state: string; trust: { failed?: number; lastFailure?: unknown } | null }[];
    };
    expect(stats.suspensions).toEqual([
      expect.objectContaining({ nodeId: ids.liar.toLowerCase(), slashed: '15', reason: standing.reason }),
    ]);
    // Refused by the hub, still in the node list: marked suspended, with its failed checks.
    expect(stats.nodeList.find((n) => n.nodeId.toLowerCase() === ids.liar.toLowerCase())).toMatchObject({
      state: 'suspended',
      trust: {
        failed: expect.any(Number),
        lastFailure: expect.objectContaining({ reason: expect.any(String) }),
      },
    });
    expect((await app.inject({ url: '/network' })).body).toContain('stake slashed 15');
    // The reconciliation check (the pool's positions, the ledger) finds nothing amiss.
    const report = await reconcile({
      db: db.db,
      services: createChainServices(app.ctx.config)!,
      staleHoldMs: 60_000,
      now: Date.now(),
    });
    expect(report.differences).toEqual([]);
    // The honest node still serves, and is the one verified node of the model; the verifier
    // (never verified itself) is listed as on probation.
    expect(app.hub.index.node(ids.honest)?.state).toBe('online');
    const jwt = await signIn(app, privateKeyToAccount(generatePrivateKey()));
    const catalog = (
      await app.inject({ url: '/api/router/models', headers: { authorization: `Bearer ${jwt}` } })
    ).json() as { data: { id: string; liveNodes: number; verifiedNodes: number; probationNodes: number }[] };
    expect(catalog.data.find((m) => m.id === MODEL)).toMatchObject({
      liveNodes: 2,
      verifiedNodes: 1,
      probationNodes: 1,
    });
  }, 180_000);

  test('behavior: a price-0 node serving junk under the claimed hash gets at most its probation share, then is suspended', async () => {
    const { dir, db, app, base, daemons, shaOfA, claimingA, nodeIdOf, pairFor } = net;
    // Junk: random weights with a flat output layer (near-uniform tokens), priced at 0, A's hash claimed.
    const c = path.join(dir, 'c.gguf');
    await writeTinyModel({ path: c, seed: 303, outputStd: 0.02 });
    const home = claimingA('junk', c, shaOfA);
    writeFileSync(
      path.join(home, 'state', 'config.json'),
      JSON.stringify({ price: { currency: 'USD', inputPerMTok: '0', outputPerMTok: '0' } }),
    );
    const junk = await nodeIdOf(home);
    daemons.push(spawnNodeDaemon({ coordinator: base, dir: home, args: ['--role', 'cpu'] }));
    await until(() => pairFor(junk) !== undefined, 60_000);
    expect(pairFor(junk)!.target.offer.modelId).toBe(MODEL);

    // A client's requests: the junk node is the cheapest, yet takes at most its share (20 %).
    const { userId, key } = await newApiClient(app, {
      keyName: 'c',
      creditNano: USD,
      creditRef: 'trust-client',
    });
    const ask = async (n: number) => {
      for (let i = 0; i < n; i++) {
        const res = await fetch(`${base}/v1/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: MODEL, prompt: `tell me ${i}`, max_tokens: 8 }),
        });
        expect(res.status).toBe(200);
      }
      await app.ctx.ledger.idle();
    };
    const servedBy = async () => {
      const rows = await db.db
        .selectFrom('usage_records')
        .select('node_id')
        .where('user_id', '=', userId)
        .execute();
      const count = new Map<string, number>();
      for (const r of rows) count.set(r.node_id.toLowerCase(), (count.get(r.node_id.toLowerCase()) ?? 0) + 1);
      return count;
    };
    await ask(40);
    const before = await servedBy();
    const junkShare = (before.get(junk.toLowerCase()) ?? 0) / 40;
    console.log(
      `trust: the price-0 junk node took ${(junkShare * 100).toFixed(0)} % of 40 requests on probation (cap 20 %)`,
    );
    expect(junkShare).toBeGreaterThan(0);
    expect(junkShare).toBeLessThanOrEqual(0.2 + 1 / 40);

    // Canaries suspend it; afterwards it serves nothing.
    let canaries = 0;
    while (pairFor(junk) && canaries < 20) {
      const pair = pairFor(junk)!;
      await app.canaries.runOnce(pair.target, { verifier: pair.verifier });
      canaries++;
    }
    expect(canaries).toBeLessThanOrEqual(20);
    await until(() => app.hub.index.node(junk) === undefined, 10_000);
    await ask(10);
    const after = await servedBy();
    expect(after.get(junk.toLowerCase()) ?? 0).toBe(before.get(junk.toLowerCase()) ?? 0);
  }, 180_000);

  test('behavior: spot checks verify live completions on the verifier; the honest node passes them', async () => {
    const { db, app, base, ids } = net;
    const { userId, key } = await newApiClient(app, {
      keyName: 's',
      creditNano: USD,
      creditRef: 'spot-client',
    });
    const spots = () => db.db.selectFrom('verifications').selectAll().where('source', '=', 'spot').execute();
    expect(await spots()).toEqual([]);
    app.canaries.spotCheckRate = 1;
    try {
      for (let i = 0; i < 3; i++) {
        const res = await fetch(`${base}/v1/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: MODEL, prompt: `a spot check ${i}`, max_tokens: 8 }),
        });
        expect(res.status).toBe(200);
      }
      // The completions the honest node served are verified on the network node, in the background.
      const served = async () =>
        (await db.db.selectFrom('usage_records').select('node_id').where('user_id', '=', userId).execute())
          .map((r) => r.node_id.toLowerCase())
          .filter((n) => n === ids.honest.toLowerCase() || n === ids.verifier.toLowerCase()).length;
      await until(async () => (await spots()).length >= (await served()), 30_000);
      const rows = await spots();
      expect(rows.length).toBeGreaterThan(0);
      // Every check passed: the honest node's on the network verifier; the network node also
      // serves the model, and its own answers are checked by the coordinator (no other node has A).
      expect(rows.filter((r) => Number(r.passed) !== 1)).toEqual([]);
      expect(rows.length).toBeGreaterThan(0);
      const honestRows = rows.filter((r) => r.node_id === ids.honest.toLowerCase());
      expect(honestRows.every((r) => r.verifier_id === ids.verifier.toLowerCase())).toBe(true);
      expect(
        rows.every((r) => [ids.honest, ids.verifier].map((id) => id.toLowerCase()).includes(r.node_id)),
      ).toBe(true);
    } finally {
      app.canaries.spotCheckRate = 0;
    }
  }, 120_000);

  test('behavior: a verifier lying about its weights convicts no one: the second opinion passes the honest node, and the verifier is suspended', async () => {
    const { dir, db, app, base, daemons, ids, verifierOwner, shaOfA, claimingA, nodeIdOf, pairFor } = net;
    // A network node holding B's weights under A's hash, owned (silver tier): it fails whatever it scores.
    const b = path.join(dir, 'b3.gguf');
    await writeTinyModel({ path: b, seed: 505, outputStd: 0.5 });
    const home = claimingA('lying-verifier', b, shaOfA);
    const lying = await nodeIdOf(home);
    const proof = await signOwnerProof(lying, verifierOwner);
    const args = [
      '--role',
      'network',
      '--owner-address',
      proof.address,
      '--owner-signature',
      proof.signature,
    ];
    daemons.push(spawnNodeDaemon({ coordinator: base, dir: home, args }));
    const entryOf = (nodeId: string) => {
      const node = app.hub.index.node(nodeId);
      return node?.scopes.has('verify') ? [...node.entries.values()][0] : undefined;
    };
    await until(() => entryOf(lying) !== undefined, 60_000);

    for (let i = 0; i < 2; i++) {
      const honest = pairFor(ids.honest)!;
      const outcome = await app.canaries.runOnce(honest.target, { verifier: entryOf(lying)! });
      expect(outcome).toMatchObject({
        status: 'verified',
        judgement: { passed: true },
        standing: { status: 'trusted' },
      });
    }
    const rows = await db.db
      .selectFrom('verifications')
      .select(['verifier_id', 'passed'])
      .where('node_id', '=', lying.toLowerCase())
      .execute();
    // Its two verdicts were overturned by the coordinator's own verifier, and count against it.
    expect(rows).toEqual([
      { verifier_id: 'coordinator', passed: 0 },
      { verifier_id: 'coordinator', passed: 0 },
    ]);
    await until(() => app.hub.index.node(lying) === undefined, 10_000);
    const honestRows = await db.db
      .selectFrom('verifications')
      .select(['verifier_id', 'passed'])
      .where('node_id', '=', ids.honest.toLowerCase())
      .execute();
    expect(honestRows.every((r) => Number(r.passed) === 1)).toBe(true);
  }, 120_000);

  test('behavior: with no network node holding the weights, the coordinator verifies itself and still catches a liar', async () => {
    const { dir, db, app, base, daemons, ids, modelA, shaOfA, claimingA, nodeIdOf, pairFor } = net;
    // The network verifier leaves; the coordinator loads model A itself (trust.verifierModelsDir).
    await daemons[2]!.stop();
    await until(() => app.hub.index.node(ids.verifier) === undefined, 10_000);
    const own = path.join(dir, 'coordinator-models');
    mkdirSync(own, { recursive: true });
    writeFileSync(path.join(own, 'a.gguf'), readFileSync(modelA));
    const local = await startLocalVerifier({ modelsDir: own, stateDir: path.join(dir, 'coordinator-state') });
    app.canaries.setLocalVerifier(local);
    try {
      expect(app.canaries.verifiersFor(pairFor(ids.honest)!.target)).toEqual([{ local: expect.any(String) }]);
      const b = path.join(dir, 'b2.gguf');
      await writeTinyModel({ path: b, seed: 404, outputStd: 0.5 });
      const home = claimingA('liar2', b, shaOfA);
      const liar2 = await nodeIdOf(home);
      daemons.push(spawnNodeDaemon({ coordinator: base, dir: home, args: ['--role', 'cpu'] }));
      await until(() => pairFor(liar2) !== undefined, 60_000);

      const honest = pairFor(ids.honest)!;
      const passed = await app.canaries.runOnce(honest.target, { verifier: honest.verifier });
      expect(passed).toMatchObject({ status: 'verified', judgement: { passed: true } });
      let canaries = 0;
      for (let attempts = 0; pairFor(liar2) && attempts < 30; attempts++) {
        const pair = pairFor(liar2)!;
        if ((await app.canaries.runOnce(pair.target, { verifier: pair.verifier })).status === 'verified')
          canaries++;
      }
      expect(pairFor(liar2)).toBeUndefined();
      // No single check convicts; a liar whose answers ran short may need a third or fourth.
      expect(canaries).toBeGreaterThanOrEqual(2);
      expect(canaries).toBeLessThanOrEqual(4);
      const rows = await db.db
        .selectFrom('verifications')
        .select(['verifier_id', 'passed'])
        .where('node_id', '=', liar2.toLowerCase())
        .execute();
      expect(rows).toHaveLength(canaries);
      expect(rows.every((r) => r.verifier_id === 'coordinator')).toBe(true);
    } finally {
      app.canaries.setLocalVerifier(undefined);
      await local.close();
    }
  }, 180_000);
});
