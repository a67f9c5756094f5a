/**
 * Slashing against a real anvil, on SQLite and PostgreSQL: a slash order (what trust/ writes when it
 * suspends an owned node) cuts the owner's stake and what is still unbonding by its fraction,
 * records a `slash` stake event with the evidence, and moves the tokens from the staking vault to
 * the rewards vault — once, however many passes run at once; chain_getStake shows the new
 * quantity and the reconciliation check finds the vault still backing every stake.
 */
import { type Address, parseEther } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { NATIVE_TRANSFER_FEE_WEI } from '../coordinator/src/chain/constants.js';
import { type ChainServices, createChainServices } from '../coordinator/src/chain/create-chain-services.js';
import { TransferOutbox } from '../coordinator/src/chain/transfer-outbox.js';
import { reconcile } from '../coordinator/src/reconcile/reconcile.js';
import { executeSlashes } from '../coordinator/src/staking/slash.js';
import { SLASH_PURPOSE, slashTransfers } from '../coordinator/src/staking/slash-transfers.js';
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
  devnet = await startDevnet({ blockTimeS: 0.1 });
});
afterAll(async () => devnet?.stop());

describeBackends('slashing', (backend) => {
  let t: TestApp;
  const owner = privateKeyToAccount(generatePrivateKey());
  let jwt: string;

  beforeAll(async () => {
    // The timer is slow here: the test runs the passes itself.
    t = await createTestApp(backend, {
      label: 'slash',
      overrides: chainOverrides(devnet, {
        staking: { releaseIntervalMs: 3_600_000, unbondingPeriodS: 3_600 },
      }),
    });
    jwt = await signIn(t.app, owner);
    await devnet.fund(await proxyAddressOf(t.app, jwt), { nativeWei: parseEther('101') });
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
  /** What executeSlashes needs: the chain, and the transfer outbox its moves go through. */
  const slashDeps = (services: ChainServices) => {
    const log = { warn: () => {}, error: (o: object, m: string) => console.error(m, o) };
    const outbox = new TransferOutbox({ db: t.db, context: services.context, clock: t.clock, log }).register(
      SLASH_PURPOSE,
      slashTransfers(services, t.clock),
    );
    return { db: t.db, services, clock: t.clock, outbox, log };
  };
  const balance = (address: Address) => devnet.context.client.getBalance({ address });
  const order = (id: string, fractionBps: number) =>
    t.db
      .insertInto('slashes')
      .values({
        id,
        node_id: '0x'.padEnd(42, '7'),
        owner: owner.address.toLowerCase(),
        fraction_bps: fractionBps,
        evidence: JSON.stringify({ verifications: [{ jobId: `job-${id}` }] }),
        status: 'pending',
        amount_wei: null,
        stake_event_id: null,
        tx_hash: null,
        raw_tx: null,
        created_at: Date.now(),
        updated_at: Date.now(),
      })
      .execute();

  test('behavior: stake and unbonding drop by the fraction; the tokens move once, however many passes race', async () => {
    const services = createChainServices(t.config)!;
    const deps = slashDeps(services);
    const vault = devnet.vaults.staking.address;
    const rewards = devnet.vaults.rewards.address;
    const [vaultBefore, rewardsBefore] = await Promise.all([balance(vault), balance(rewards)]);
    const txsBefore = (await allTransactions(devnet)).length;

    await order('slash-a', 1_000); // 10 %
    const reports = await Promise.all(Array.from({ length: 5 }, () => executeSlashes(deps)));
    expect(reports.reduce((n, r) => n + r.slashed, 0)).toBe(1);

    // 80 staked → 72; 20 unbonding → 18; 10 TOK slashed, moved less the transfer's gas.
    const read = (await tx('chain_getStake', [owner.address])).json() as {
      stake: { quantity: string };
      unbonding: { amount: string }[];
    };
    expect(read.stake.quantity).toBe('72.0000 TOK');
    expect(read.unbonding.map((u) => u.amount)).toEqual(['18.0000 TOK']);
    const row = await t.db
      .selectFrom('slashes')
      .selectAll()
      .where('id', '=', 'slash-a')
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'sent', amount_wei: parseEther('10').toString() });
    expect(await balance(vault)).toBe(vaultBefore - parseEther('10'));
    expect(await balance(rewards)).toBe(rewardsBefore + parseEther('10') - NATIVE_TRANSFER_FEE_WEI);
    expect((await allTransactions(devnet)).length).toBe(txsBefore + 1);
    const events = await t.db.selectFrom('stake_events').selectAll().where('kind', '=', 'slash').execute();
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ amount_wei: parseEther('10').toString(), tx_hash: row.tx_hash });
    expect(JSON.parse(events[0]!.evidence!)).toEqual({ verifications: [{ jobId: 'job-slash-a' }] });

    // Passes after it change nothing.
    await executeSlashes(deps);
    expect((await allTransactions(devnet)).length).toBe(txsBefore + 1);
    const report = await reconcile({ db: t.db, services, staleHoldMs: 60_000, now: Date.now() });
    expect(report.differences).toEqual([]);
  });

  test('behavior: an owner with nothing staked is not slashed (the order ends as none), no transfer', async () => {
    const services = createChainServices(t.config)!;
    const txsBefore = (await allTransactions(devnet)).length;
    const stranger = privateKeyToAccount(generatePrivateKey());
    await signIn(t.app, stranger);
    await t.db
      .insertInto('slashes')
      .values({
        id: 'slash-b',
        node_id: '0x'.padEnd(42, '8'),
        owner: stranger.address.toLowerCase(),
        fraction_bps: 5_000,
        evidence: '{}',
        status: 'pending',
        amount_wei: null,
        stake_event_id: null,
        tx_hash: null,
        raw_tx: null,
        created_at: Date.now(),
        updated_at: Date.now(),
      })
      .execute();
    expect(await executeSlashes(slashDeps(services))).toEqual({
      slashed: 0,
      sent: 0,
      none: 1,
    });
    expect(
      await t.db.selectFrom('slashes').select('status').where('id', '=', 'slash-b').executeTakeFirst(),
    ).toEqual({
      status: 'none',
    });
    expect((await allTransactions(devnet)).length).toBe(txsBefore);
  });
});
