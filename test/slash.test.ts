/**
 * Slashing against a real anvil and its staking pool, on SQLite and PostgreSQL: a slash order (what
 * trust/ writes when it suspends an owned node) becomes one `slash(owner, bps, convictionId,
 * evidenceHash)` call by the pool's slasher — however many passes race — which cuts the owner's
 * stake and what is still unbonding by its fraction into the pool's rewards; the ledger's view
 * follows from the Slashed event (a `slash` stake event with the evidence); chain_getStake shows the
 * pool's new position and the reconciliation check finds the ledger and the pool agreeing — and
 * reports it when they do not.
 */
import { type Address, keccak256, parseEther, parseEventLogs, sha256, toBytes } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type ChainServices, createChainServices } from '../coordinator/src/chain/create-chain-services.js';
import { stakingPoolArtifact } from '../coordinator/src/chain/staking-pool-artifact.js';
import { TransferOutbox } from '../coordinator/src/chain/transfer-outbox.js';
import { reconcile } from '../coordinator/src/reconcile/reconcile.js';
import { registerPoolTransfers } from '../coordinator/src/staking/pool-transfers.js';
import { executeSlashes } from '../coordinator/src/staking/slash.js';
import { createTestApp, describeBackends, signIn, type TestApp } from '../coordinator/src/testing/index.js';
import {
  allTransactions,
  chainOverrides,
  type Devnet,
  proxyAddressOf,
  startDevnet,
} from './chain-fixture.js';

let devnet: Devnet;
beforeAll(async () => {
  // Blocks every 0.1 s, not the spec chain's 0.5 s: the tests wait for blocks, and none of what
  // they check depends on the block time.
  devnet = await startDevnet({ blockTimeS: 0.1, stakingPool: { unbondingPeriodS: 3_600 } });
});
afterAll(async () => devnet?.stop());

describeBackends('slashing', (backend) => {
  let t: TestApp;
  const owner = privateKeyToAccount(generatePrivateKey());
  let jwt: string;
  let proxy: Address;

  beforeAll(async () => {
    // The timer is slow here: the test runs the passes itself.
    t = await createTestApp(backend, {
      label: 'slash',
      overrides: chainOverrides(devnet, { staking: { releaseIntervalMs: 3_600_000 } }),
    });
    jwt = await signIn(t.app, owner);
    proxy = await proxyAddressOf(t.app, jwt);
    await devnet.fund(proxy, { nativeWei: parseEther('101') });
    expect((await tx('chain_stake', [owner.address, '100.0000 TOK'], jwt)).statusCode).toBe(200);
    expect((await tx('chain_unstake', [owner.address, '20.0000 TOK'], jwt)).statusCode).toBe(200);
  });
  afterAll(async () => t?.close());

  const tx = (method: string, params: unknown[], token?: string) =>
    t.app.inject({
      method: 'POST',
      url: '/tx',
      headers: token ? { authorization: `Bearer ${token}` } : {},
      payload: { method, params },
    });
  /** What executeSlashes needs: the chain, and the transfer outbox its calls go through. */
  const slashDeps = (services: ChainServices) => {
    const log = { warn: () => {}, error: (o: object, m: string) => console.error(m, o) };
    const outbox = new TransferOutbox({ db: t.db, context: services.context, clock: t.clock, log });
    registerPoolTransfers(outbox, { db: t.db, services, keyring: t.app.ctx.keyring, clock: t.clock });
    return { db: t.db, services, clock: t.clock, outbox, log };
  };
  const pool = { address: () => devnet.stakingPool, abi: stakingPoolArtifact.abi };
  const rewardsPool = () =>
    devnet.context.client.readContract({
      address: pool.address(),
      abi: pool.abi,
      functionName: 'rewardsPool',
    });
  const balance = (address: Address) => devnet.context.client.getBalance({ address });
  const order = (id: string, fractionBps: number, who: string = owner.address, evidence?: string) =>
    t.db
      .insertInto('slashes')
      .values({
        id,
        node_id: '0x'.padEnd(42, '7'),
        owner: who.toLowerCase(),
        fraction_bps: fractionBps,
        evidence: evidence ?? JSON.stringify({ verifications: [{ jobId: `job-${id}` }] }),
        status: 'pending',
        amount_wei: null,
        stake_event_id: null,
        tx_hash: null,
        raw_tx: null,
        created_at: Date.now(),
        updated_at: Date.now(),
      })
      .execute();
  const slashId = (id: string) => `${backend.name}-${id}`;

  test('behavior: stake and unbonding drop by the fraction in the pool; one call, however many passes race', async () => {
    const services = createChainServices(t.config)!;
    const deps = slashDeps(services);
    const [poolBalance, rewardsBefore] = await Promise.all([balance(pool.address()), rewardsPool()]);
    const txsBefore = (await allTransactions(devnet)).length;

    const id = slashId('a');
    await order(id, 1_000); // 10 %
    const reports = await Promise.all(Array.from({ length: 5 }, () => executeSlashes(deps)));
    expect(reports.reduce((n, r) => n + r.slashed, 0)).toBe(1);

    // 80 staked → 72; 20 unbonding → 18; the 10 TOK cut stays in the pool, in its rewards.
    const read = (await tx('chain_getStake', [owner.address])).json() as {
      stake: { quantity: string };
      unbonding: { amount: string }[];
    };
    expect(read.stake.quantity).toBe('72.0000 TOK');
    expect(read.unbonding.map((u) => u.amount)).toEqual(['18.0000 TOK']);
    const row = await t.db.selectFrom('slashes').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'sent', amount_wei: parseEther('10').toString(), raw_tx: null });
    expect(await balance(pool.address())).toBe(poolBalance);
    expect(await rewardsPool()).toBe(rewardsBefore + parseEther('10'));
    const transactions = await allTransactions(devnet);
    expect(transactions.length).toBe(txsBefore + 1);
    expect(transactions.at(-1)).toMatchObject({
      hash: row.tx_hash,
      from: devnet.vaults.staking.address.toLowerCase(),
      to: pool.address().toLowerCase(),
    });
    // The Slashed event names the conviction and the evidence's sha256, as the row keeps it.
    const receipt = await devnet.context.client.getTransactionReceipt({ hash: row.tx_hash as `0x${string}` });
    const [slashed] = parseEventLogs({ abi: pool.abi, eventName: 'Slashed', logs: receipt.logs });
    expect(slashed!.args).toMatchObject({
      owner: proxy,
      convictionId: keccak256(toBytes(id)),
      bps: 1_000n,
      fromStaked: parseEther('8'),
      fromUnbonding: parseEther('2'),
      evidenceHash: sha256(toBytes(row.evidence)),
    });
    expect(row.evidence_hash).toBe(sha256(toBytes(row.evidence)));
    const events = await t.db.selectFrom('stake_events').selectAll().where('kind', '=', 'slash').execute();
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      id: row.stake_event_id,
      amount_wei: parseEther('10').toString(),
      tx_hash: row.tx_hash,
    });
    expect(JSON.parse(events[0]!.evidence!)).toEqual({ verifications: [{ jobId: `job-${id}` }] });

    // Passes after it change nothing.
    await executeSlashes(deps);
    expect((await allTransactions(devnet)).length).toBe(txsBefore + 1);
    const report = await reconcile({ db: t.db, services, staleHoldMs: 60_000, now: Date.now() });
    expect(report.differences).toEqual([]);
  });

  test("behavior: a fraction above the pool's cap takes the cap", async () => {
    const services = createChainServices(t.config)!;
    const id = slashId('capped');
    await order(id, 5_000); // 50 % asked; the devnet pool caps a slash at 10 %
    expect(await executeSlashes(slashDeps(services))).toMatchObject({ slashed: 1, sent: 1 });
    expect((await tx('chain_getStake', [owner.address])).json().stake.quantity).toBe('64.8000 TOK');
    const row = await t.db.selectFrom('slashes').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'sent', amount_wei: parseEther('9').toString() });
  });

  test('behavior: an owner with nothing staked is not slashed (the order ends as none), no transaction', async () => {
    const services = createChainServices(t.config)!;
    const txsBefore = (await allTransactions(devnet)).length;
    const stranger = privateKeyToAccount(generatePrivateKey());
    await signIn(t.app, stranger);
    const id = slashId('b');
    await order(id, 5_000, stranger.address, '{}');
    expect(await executeSlashes(slashDeps(services))).toEqual({ slashed: 0, sent: 0, none: 1 });
    expect(await t.db.selectFrom('slashes').select('status').where('id', '=', id).executeTakeFirst()).toEqual(
      {
        status: 'none',
      },
    );
    expect((await allTransactions(devnet)).length).toBe(txsBefore);
  });

  test('behavior: the reconciliation check reports a position the ledger has wrong', async () => {
    const services = createChainServices(t.config)!;
    const check = async () =>
      (await reconcile({ db: t.db, services, staleHoldMs: 60_000, now: Date.now() })).differences;
    expect(await check()).toEqual([]);
    const user = await t.db
      .selectFrom('users')
      .select('id')
      .where('address', '=', owner.address)
      .executeTakeFirstOrThrow();
    const stake = await t.db
      .selectFrom('stakes')
      .select('quantity_wei')
      .where('user_id', '=', user.id)
      .executeTakeFirstOrThrow();
    const off = (BigInt(stake.quantity_wei) - 1n).toString();
    await t.db.updateTable('stakes').set({ quantity_wei: off }).where('user_id', '=', user.id).execute();
    try {
      expect(await check()).toEqual([
        {
          check: 'pool_position',
          user: user.id,
          account: proxy,
          onChain: { staked: stake.quantity_wei, unbonding: parseEther('16.2').toString() },
          ledger: { staked: off, unbonding: parseEther('16.2').toString() },
        },
      ]);
    } finally {
      await t.db
        .updateTable('stakes')
        .set({ quantity_wei: stake.quantity_wei })
        .where('user_id', '=', user.id)
        .execute();
    }
    expect(await check()).toEqual([]);
  });
  test('behavior: a slash the pool refuses before signing waits an exponential back-off, recorded on its outbox rows', async () => {
    // A slasher key the pool does not know (its gas paid): the simulation reverts (NotSlasher) every try.
    const slasherKey = generatePrivateKey();
    await devnet.fund(privateKeyToAccount(slasherKey).address, { nativeWei: parseEther('1') });
    const wrongKey = createChainServices({ ...t.config, chain: { ...t.config.chain, slasherKey } })!;
    const deps = slashDeps(wrongKey);
    const txsBefore = (await allTransactions(devnet)).length;
    const id = slashId('refused');
    await order(id, 1_000);
    const tries = async () =>
      (
        await t.db
          .selectFrom('chain_transfers')
          .select(['status', 'error_code', 'attempt', 'retry_at'])
          .where('purpose', '=', 'pool_slash')
          .where('ref', '=', id)
          .orderBy('attempt')
          .execute()
      ).map((r) => ({ ...r, attempt: Number(r.attempt), retry_at: Number(r.retry_at) }));
    const refused = (attempt: number, retryAt: number) => ({
      status: 'cancelled',
      error_code: 'chain_tx_failed',
      attempt,
      retry_at: retryAt,
    });
    const start = t.clock.now();
    for (let pass = 0; pass < 10; pass++) await executeSlashes(deps);
    expect(await tries()).toEqual([refused(1, start + 30_000)]);
    t.clock.advance(29_999);
    await executeSlashes(deps);
    expect(await tries()).toHaveLength(1);
    t.clock.advance(1);
    for (let pass = 0; pass < 10; pass++) await executeSlashes(deps);
    expect(await tries()).toEqual([refused(1, start + 30_000), refused(2, start + 90_000)]);
    t.clock.advance(59_999);
    await executeSlashes(deps);
    expect(await tries()).toHaveLength(2);
    t.clock.advance(1);
    await executeSlashes(deps);
    expect((await tries()).at(-1)).toEqual(refused(3, start + 90_000 + 120_000));
    expect(
      await t.db.selectFrom('slashes').select(['status', 'raw_tx']).where('id', '=', id).executeTakeFirst(),
    ).toEqual({
      status: 'signing',
      raw_tx: null,
    });
    expect((await allTransactions(devnet)).length).toBe(txsBefore);

    // The pool's own slasher, once the wait is over: one slash() call.
    t.clock.advance(120_000);
    expect(await executeSlashes(slashDeps(createChainServices(t.config)!))).toMatchObject({ sent: 1 });
    expect((await allTransactions(devnet)).length).toBe(txsBefore + 1);
  });
});
