/**
 * Staking through POST /tx against a real anvil (one per file), on SQLite and PostgreSQL: stake and
 * claim move real tokens; rewards over a simulated year (injected clock) are exact to the wei.
 */
import { type Hex, parseEther } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { CHAIN_ID, GAS_PRICE_WEI, NATIVE_TRANSFER_FEE_WEI } from '../coordinator/src/chain/constants.js';
import { tierOf } from '../coordinator/src/staking/tier-of.js';
import {
  createTestApp,
  describeBackends,
  expectBooksBalanced,
  signIn,
  type TestApp,
} from '../coordinator/src/testing/index.js';
import {
  allTransactions,
  chainOverrides,
  type Devnet,
  proxyAddressOf,
  startDevnet,
  transactionOf,
} from './chain-fixture.js';

const YEAR_MS = 365 * 24 * 60 * 60 * 1000;
const UNBONDING_PERIOD_S = 3_600;

let devnet: Devnet;
beforeAll(async () => {
  // Blocks every 0.1 s, not the spec chain's 0.5 s: the tests wait for blocks, and none of what
  // they check depends on the block time.
  devnet = await startDevnet({ blockTimeS: 0.1 });
});
afterAll(async () => devnet?.stop());

/** Hashes of the transactions the coordinator sent (stake, claim, release), checked at the end. */
const serviceSent: Hex[] = [];

describeBackends('staking via /tx', (backend) => {
  let t: TestApp;
  let token: string;
  let otherToken: string;
  let proxy: `0x${string}`;
  const owner = privateKeyToAccount(generatePrivateKey());
  const other = privateKeyToAccount(generatePrivateKey());

  beforeAll(async () => {
    t = await createTestApp(backend, {
      label: 'staking',
      overrides: chainOverrides(devnet, {
        staking: { unbondingPeriodS: UNBONDING_PERIOD_S, releaseIntervalMs: 100 },
      }),
    });
    token = await signIn(t.app, owner);
    otherToken = await signIn(t.app, other);
    proxy = await proxyAddressOf(t.app, token);
    // The proxy wallet pays its own gas: the devnet funds it with native token.
    await devnet.fund(proxy, { nativeWei: parseEther('1200') });
  });
  afterAll(async () => {
    if (t) await expectBooksBalanced(t.app.ctx, t.config);
    await t?.close();
  });

  const tx = (method: string, params: unknown[], jwt?: string) =>
    t.app.inject({
      method: 'POST',
      url: '/tx',
      headers: jwt ? { authorization: `Bearer ${jwt}` } : {},
      payload: { method, params },
    });
  const balance = (address: `0x${string}`) => devnet.context.client.getBalance({ address });
  const stakeEvents = () => t.db.selectFrom('stake_events').selectAll().execute();

  test('default: chain_stake makes a real transfer; chain_getStake shows quantity and tier', async () => {
    const vault = devnet.vaults.staking.address;
    const [vaultBefore, proxyBefore] = await Promise.all([balance(vault), balance(proxy)]);
    const response = await tx('chain_stake', [owner.address, '1000.0000 TOK'], token);
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toEqual({
      txId: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      stake: { quantity: '1000.0000 TOK', tier: 'silver', claimable: '0.0000 TOK' },
    });
    serviceSent.push(body.txId);
    const onChain = await transactionOf(devnet, body.txId);
    expect(onChain).toMatchObject({
      from: proxy.toLowerCase(),
      to: vault.toLowerCase(),
      value: parseEther('1000'),
    });
    expect(await balance(vault)).toBe(vaultBefore + parseEther('1000'));
    expect(await balance(proxy)).toBe(proxyBefore - parseEther('1000') - NATIVE_TRANSFER_FEE_WEI);

    const events = await stakeEvents();
    expect(events.filter((e) => e.user_id !== undefined && e.tx_hash === body.txId)).toHaveLength(1);

    // Public: no session needed; lowercase addresses work too.
    const read = await tx('chain_getStake', [owner.address.toLowerCase()]);
    expect(read.statusCode).toBe(200);
    expect(read.json().stake).toEqual({ quantity: '1000.0000 TOK', tier: 'silver', claimable: '0.0000 TOK' });
    expect(await tierOf(t.db, owner.address)).toBe('silver');
  });

  test("error: another's address is 403, no session 401, nothing recorded", async () => {
    const before = await stakeEvents();
    const forbidden = await tx('chain_stake', [owner.address, '1.0000 TOK'], otherToken);
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.json().error.code).toBe('forbidden');
    expect((await tx('chain_claim', [owner.address], otherToken)).statusCode).toBe(403);
    expect((await tx('chain_unstake', [owner.address, '1.0000 TOK'], otherToken)).statusCode).toBe(403);
    expect((await tx('chain_stake', [owner.address, '1.0000 TOK'])).statusCode).toBe(401);
    expect(await stakeEvents()).toEqual(before);
  });

  test('error: malformed amounts and more than the balance are 400, nothing recorded', async () => {
    const before = await stakeEvents();
    const proxyBefore = await balance(proxy);
    for (const amount of [
      '1.0 TOK',
      '1.00000 TOK',
      '-1.0000 TOK',
      '1.0000 GPU',
      '1.0000',
      '0.0000 TOK',
      1,
      null,
      '5000.0000 TOK',
    ]) {
      const response = await tx('chain_stake', [owner.address, amount], token);
      expect({ amount, status: response.statusCode, param: response.json().error?.param }).toEqual({
        amount,
        status: 400,
        param: 'params.1',
      });
    }
    expect((await tx('chain_stake', [owner.address, '5000.0000 TOK'], token)).json().error.code).toBe(
      'insufficient_funds',
    );
    expect(await stakeEvents()).toEqual(before);
    expect(await balance(proxy)).toBe(proxyBefore);
    expect((await tx('chain_getStake', [owner.address])).json().stake.quantity).toBe('1000.0000 TOK');
    expect((await tx('chain_getStake', ['0x1234'])).statusCode).toBe(400);
    expect((await tx('chain_nope', [])).statusCode).toBe(400);
  });

  test('behavior: concurrent stakes cannot spend the same balance twice', async () => {
    const spare = privateKeyToAccount(generatePrivateKey());
    const spareToken = await signIn(t.app, spare);
    const spareProxy = await proxyAddressOf(t.app, spareToken);
    await devnet.fund(spareProxy, { nativeWei: parseEther('15') });
    const responses = await Promise.all(
      [1, 2, 3].map(() => tx('chain_stake', [spare.address, '6.0000 TOK'], spareToken)),
    );
    const statuses = responses.map((r) => r.statusCode).sort();
    expect(statuses).toEqual([200, 200, 400]);
    for (const r of responses.filter((r) => r.statusCode === 200)) serviceSent.push(r.json().txId);
    expect((await tx('chain_getStake', [spare.address])).json().stake.quantity).toBe('12.0000 TOK');
  });

  test('behavior: a simulated year pays quantity × APY × multiplier to the last wei, once', async () => {
    t.clock.advance(YEAR_MS);
    token = await signIn(t.app, owner); // the old session expired during the year
    // 1000 × 5% × 1.1 (silver)
    expect((await tx('chain_getStake', [owner.address])).json().stake.claimable).toBe('55.0000 TOK');

    // Adding stake settles first: the year's rewards are kept.
    const more = await tx('chain_stake', [owner.address, '100.0000 TOK'], token);
    expect(more.statusCode).toBe(200);
    serviceSent.push(more.json().txId);
    expect(more.json().stake).toEqual({
      quantity: '1100.0000 TOK',
      tier: 'silver',
      claimable: '55.0000 TOK',
    });

    const proxyBefore = await balance(proxy);
    const claimed = await tx('chain_claim', [owner.address], token);
    expect(claimed.statusCode).toBe(200);
    expect(claimed.json()).toMatchObject({
      claimed: '55.0000 TOK',
      stake: { quantity: '1100.0000 TOK', tier: 'silver', claimable: '0.0000 TOK' },
    });
    const payout = await transactionOf(devnet, claimed.json().txId);
    serviceSent.push(claimed.json().txId);
    expect(payout).toMatchObject({
      from: devnet.vaults.rewards.address.toLowerCase(),
      to: proxy.toLowerCase(),
      value: parseEther('55'), // exactly 55 × 10^18 wei
    });
    expect(await balance(proxy)).toBe(proxyBefore + parseEther('55'));

    const second = await tx('chain_claim', [owner.address], token);
    expect(second.statusCode).toBe(200);
    expect(second.json()).toMatchObject({ txId: null, claimed: '0.0000 TOK' });
    expect(await balance(proxy)).toBe(proxyBefore + parseEther('55'));

    // Half a year at 1100 silver: 1100 × 5% × 1.1 / 2 = 30.25, exactly.
    t.clock.advance(YEAR_MS / 2);
    token = await signIn(t.app, owner);
    const half = await tx('chain_claim', [owner.address], token);
    serviceSent.push(half.json().txId);
    expect((await transactionOf(devnet, half.json().txId)).value).toBe(parseEther('30.25'));
  });

  test('behavior: unstake drops the tier at once; funds return after the unbonding period', async () => {
    const response = await tx('chain_unstake', [owner.address, '1050.0000 TOK'], token);
    expect(response.statusCode).toBe(200);
    expect(response.json().stake).toMatchObject({ quantity: '50.0000 TOK', tier: 'none' });
    expect(await tierOf(t.db, owner.address)).toBe('none');
    const tooMuch = await tx('chain_unstake', [owner.address, '51.0000 TOK'], token);
    expect(tooMuch.statusCode).toBe(400);

    const proxyBefore = await balance(proxy);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(await balance(proxy)).toBe(proxyBefore); // still unbonding
    t.clock.advance(UNBONDING_PERIOD_S * 1000);
    let row: { status: string; tx_hash: string | null } | undefined;
    for (let i = 0; i < 100 && row?.status !== 'released'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      row = await t.db.selectFrom('unbondings').select(['status', 'tx_hash']).executeTakeFirst();
    }
    expect(row?.status).toBe('released');
    serviceSent.push(row!.tx_hash as Hex);
    expect(await balance(proxy)).toBe(proxyBefore + parseEther('1050'));
    expect((await tx('chain_getStake', [owner.address])).json().unbonding).toEqual([]);
  });

  test('default: chain_getTiers is public', async () => {
    const response = await tx('chain_getTiers', []);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({
      symbol: 'TOK',
      baseApyBps: 500,
      tiers: [
        { name: 'none', minStake: '0.0000 TOK', multiplierBps: 10_000, apyBps: 500 },
        { name: 'basic', minStake: '100.0000 TOK' },
        { name: 'silver', minStake: '1000.0000 TOK', apyBps: 550 },
        { name: 'gold', minStake: '10000.0000 TOK', apyBps: 625 },
        { name: 'platinum', minStake: '100000.0000 TOK', apyBps: 750 },
      ],
    });
  });
});

test('behavior: every transaction the service sent is type 0 at 150 gwei on chain 800000', async () => {
  const transactions = await allTransactions(devnet);
  for (const tx of transactions) {
    expect({ type: tx.type, gasPrice: tx.gasPrice, chainId: tx.chainId }).toEqual({
      type: 'legacy',
      gasPrice: GAS_PRICE_WEI,
      chainId: CHAIN_ID,
    });
  }
  const hashes = new Set(transactions.map((tx) => tx.hash));
  expect(serviceSent.length).toBeGreaterThanOrEqual(5);
  for (const hash of serviceSent) expect(hashes.has(hash)).toBe(true);
});
