/**
 * Stake anyone can check (issue 43), on SQLite and PostgreSQL: a coordinator on a real anvil takes
 * an owner's stake into the staking pool and carries out a conviction's slash; then an outside
 * party who knows only the chain's RPC URL and the pool's address — its own ABI fragments, viem and
 * fetch, nothing of the coordinator's code — finds the owner's position from the pool's events,
 * reads its stake and tier inputs, reads the slash's evidence hash from its Slashed event, fetches
 * the evidence from the coordinator's public URL and checks that its sha256 is that hash.
 */
import type { AddressInfo } from 'node:net';
import { createPublicClient, http, parseAbi, parseEther, sha256 } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createChainServices } from '../coordinator/src/chain/create-chain-services.js';
import { TransferOutbox } from '../coordinator/src/chain/transfer-outbox.js';
import { registerPoolTransfers } from '../coordinator/src/staking/pool-transfers.js';
import { executeSlashes } from '../coordinator/src/staking/slash.js';
import { createTestApp, describeBackends, signIn, type TestApp } from '../coordinator/src/testing/index.js';
import { evidenceHashOf } from '../coordinator/src/trust/slashing/evidence-hash.js';
import { chainOverrides, type Devnet, proxyAddressOf, startDevnet } from './chain-fixture.js';

let devnet: Devnet;
beforeAll(async () => {
  devnet = await startDevnet({ blockTimeS: 0.1 });
});
afterAll(async () => devnet?.stop());

/** What an outsider writes from the README: the pool's views and events it needs, nothing more. */
const outsiderAbi = parseAbi([
  'function positionOf(address owner) view returns (uint256 staked, uint256 unbonding, uint256 withdrawable, uint256 claimable, uint256 multiplierBps, uint256 tier)',
  'function tiers() view returns (uint256[] minStake, uint256[] multiplierBps)',
  'function baseApyBps() view returns (uint256)',
  'event Staked(address indexed owner, uint256 amount, uint256 staked)',
  'event Slashed(address indexed owner, bytes32 indexed convictionId, uint256 bps, uint256 fromStaked, uint256 fromUnbonding, bytes32 evidenceHash, uint256 staked)',
]);

describeBackends('an outside party checks stake and slashes', (backend) => {
  let t: TestApp;
  let base: string;
  const owner = privateKeyToAccount(generatePrivateKey());

  beforeAll(async () => {
    t = await createTestApp(backend, {
      label: 'outsider',
      overrides: chainOverrides(devnet, { staking: { releaseIntervalMs: 3_600_000 } }),
    });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    // The coordinator's side: the owner stakes 1,000 through /tx; a conviction orders a 10 % slash.
    const jwt = await signIn(t.app, owner);
    await devnet.fund(await proxyAddressOf(t.app, jwt), { nativeWei: parseEther('1001') });
    const staked = await t.app.inject({
      method: 'POST',
      url: '/tx',
      headers: { authorization: `Bearer ${jwt}` },
      payload: { method: 'chain_stake', params: [owner.address, '1000.0000 TOK'] },
    });
    expect(staked.statusCode).toBe(200);
    const evidence = JSON.stringify({
      nodeId: '0x'.padEnd(42, '9'),
      model: 'gpumesh/tiny-chat',
      sha256: 'ab'.repeat(32),
      evidence: 6.1,
      since: Date.now() - 60_000,
      verifications: [
        {
          jobId: `job-${backend.name}-1`,
          verifyJobId: 'v1',
          verifier: 'node-v',
          tokens: 64,
          logE: 3.2,
          failure: null,
        },
        {
          jobId: `job-${backend.name}-2`,
          verifyJobId: 'v2',
          verifier: 'node-v',
          tokens: 64,
          logE: 2.9,
          failure: null,
        },
      ],
    });
    await t.db
      .insertInto('slashes')
      .values({
        id: `slash-${backend.name}-v2`,
        node_id: '0x'.padEnd(42, '9'),
        owner: owner.address.toLowerCase(),
        fraction_bps: 1_000,
        evidence,
        evidence_hash: evidenceHashOf(evidence),
        status: 'pending',
        amount_wei: null,
        stake_event_id: null,
        tx_hash: null,
        raw_tx: null,
        created_at: Date.now(),
        updated_at: Date.now(),
      })
      .execute();
    const services = createChainServices(t.config)!;
    const log = { warn: () => {}, error: (o: object, m: string) => console.error(m, o) };
    const outbox = new TransferOutbox({ db: t.db, context: services.context, clock: t.clock, log });
    registerPoolTransfers(outbox, { db: t.db, services, keyring: t.app.ctx.keyring, clock: t.clock });
    expect(await executeSlashes({ db: t.db, services, clock: t.clock, outbox, log })).toMatchObject({
      sent: 1,
    });
  });
  afterAll(async () => t?.close());

  test('default: with the RPC URL and the pool address alone, stake and evidence check out', async () => {
    // Only these two come from the network; the evidence URL's origin is the coordinator's.
    const { rpcUrl } = devnet;
    const pool = { address: devnet.stakingPool, abi: outsiderAbi } as const;
    const client = createPublicClient({ transport: http(rpcUrl) });

    // The latest slash, and whose stake it cut: an owner that staked, by the pool's own events.
    const slashes = await client.getContractEvents({ ...pool, eventName: 'Slashed', fromBlock: 0n });
    const mine = slashes.at(-1);
    expect(mine?.args.fromStaked).toBe(parseEther('100'));
    const account = mine!.args.owner!;
    const stakedEvents = await client.getContractEvents({
      ...pool,
      eventName: 'Staked',
      args: { owner: account },
      fromBlock: 0n,
    });
    expect(stakedEvents.map((e) => e.args.amount)).toEqual([parseEther('1000')]);

    // The stake and its tier inputs: 1,000 − 10 % = 900, on the pool's ladder.
    const [staked, unbonding, , , multiplierBps, tier] = await client.readContract({
      ...pool,
      functionName: 'positionOf',
      args: [account],
    });
    const [minStake, multipliers] = await client.readContract({ ...pool, functionName: 'tiers' });
    expect({ staked, unbonding }).toEqual({ staked: parseEther('900'), unbonding: 0n });
    expect(staked).toBe(mine!.args.staked);
    expect(staked >= minStake[Number(tier)]!).toBe(true);
    expect(Number(tier) === minStake.length - 1 || staked < minStake[Number(tier) + 1]!).toBe(true);
    expect(multiplierBps).toBe(multipliers[Number(tier)]);
    expect(await client.readContract({ ...pool, functionName: 'baseApyBps' })).toBe(500n);

    // The evidence, by the hash the Slashed event names: its bytes hash to exactly that.
    const hash = mine!.args.evidenceHash!;
    const response = await fetch(`${base}/api/evidence/${hash}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const bytes = new Uint8Array(await response.arrayBuffer());
    expect(sha256(bytes)).toBe(hash);
    const document = JSON.parse(new TextDecoder().decode(bytes)) as {
      model: string;
      verifications: { jobId: string }[];
    };
    expect(document.model).toBe('gpumesh/tiny-chat');
    expect(document.verifications.map((v) => v.jobId)).toEqual([
      `job-${backend.name}-1`,
      `job-${backend.name}-2`,
    ]);

    // The coordinator's public record names the same account, pool and slash.
    const record = await (
      await fetch(`${base}/tx`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ method: 'chain_getStake', params: [owner.address] }),
      })
    ).json();
    expect(record).toMatchObject({
      stake: { quantity: '900.0000 TOK' },
      pool: { address: devnet.stakingPool, account },
    });
  });

  test('error: an unknown evidence hash is 404, a malformed one 400, in the common shape', async () => {
    const unknown = await fetch(`${base}/api/evidence/0x${'0'.repeat(64)}`);
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).error.code).toBe('not_found');
    const malformed = await fetch(`${base}/api/evidence/0x1234`);
    expect(malformed.status).toBe(400);
    expect((await malformed.json()).error.code).toBe('invalid_request');
  });
});
