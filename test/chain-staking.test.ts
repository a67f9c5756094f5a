/**
 * Staking through POST /tx against a real anvil (one per file) and the staking pool it deploys, on
 * SQLite and PostgreSQL: stake, unstake, withdraw and claim are calls of StakingPool.sol from the
 * owner's proxy wallet; rewards over a year of chain time are the pool's, exact to the wei; bad
 * input is a 4xx with its code and sends nothing.
 */
import { type Address, type Hex, parseEther, parseEventLogs, toFunctionSelector } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { CHAIN_ID, GAS_PRICE_WEI } from '../coordinator/src/chain/constants.js';
import { createChainServices } from '../coordinator/src/chain/create-chain-services.js';
import { spendableBalance } from '../coordinator/src/chain/spendable-balance.js';
import { stakingPoolArtifact } from '../coordinator/src/chain/staking-pool-artifact.js';
import { POOL_PURPOSES } from '../coordinator/src/staking/pool-transfers.js';
import { RELEASE_RETRY_AFTER_REFUSAL_MS } from '../coordinator/src/staking/release-unbonded.js';
import { tierOf } from '../coordinator/src/staking/tier-of.js';
import { formatTokenAmount } from '../coordinator/src/staking/token-amount.js';
import {
  createTestApp,
  describeBackends,
  expectBooksBalanced,
  signIn,
  type TestApp,
  until,
} from '../coordinator/src/testing/index.js';
import { loadProxyAccount } from '../coordinator/src/wallets/load-proxy-account.js';
import {
  advanceChainTime,
  allTransactions,
  chainOverrides,
  type Devnet,
  poolPosition,
  proxyAddressOf,
  startDevnet,
  transactionOf,
} from './chain-fixture.js';

const YEAR_S = 365 * 24 * 60 * 60;
const UNBONDING_PERIOD_S = 3_600;
/** The pool's accumulator scale: claimable = Σ staked × apyBps × multiplierBps × seconds / this. */
const REWARD_SCALE = 10_000n * 10_000n * BigInt(YEAR_S);
const SILVER = 500n * 11_000n;

let devnet: Devnet;
beforeAll(async () => {
  // Blocks every 0.1 s, not the spec chain's 0.5 s: the tests wait for blocks, and none of what
  // they check depends on the block time.
  devnet = await startDevnet({ blockTimeS: 0.1, stakingPool: { unbondingPeriodS: UNBONDING_PERIOD_S } });
});
afterAll(async () => devnet?.stop());

/** Hashes of the transactions the coordinator sent (stake, claim, withdraw), checked at the end. */
const serviceSent: Hex[] = [];

describeBackends('staking via /tx', (backend) => {
  let t: TestApp;
  let token: string;
  let otherToken: string;
  let proxy: Address;
  let firstStake: Hex;
  const owner = privateKeyToAccount(generatePrivateKey());
  const other = privateKeyToAccount(generatePrivateKey());

  beforeAll(async () => {
    t = await createTestApp(backend, {
      label: 'staking',
      overrides: chainOverrides(devnet, { staking: { releaseIntervalMs: 100 } }),
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
  const chain = () => devnet.context.client;
  const balance = (address: Address) => chain().getBalance({ address });
  const nonce = (address: Address) => chain().getTransactionCount({ address, blockTag: 'pending' });
  const stakeEvents = () => t.db.selectFrom('stake_events').selectAll().execute();
  const receipt = (hash: Hex) => chain().getTransactionReceipt({ hash });
  const gasPaid = async (hash: Hex) => (await receipt(hash)).gasUsed * GAS_PRICE_WEI;
  const timeOf = async (hash: Hex) =>
    (await chain().getBlock({ blockNumber: (await receipt(hash)).blockNumber })).timestamp;
  /** The amount of the RewardsClaimed event of a claim. */
  const claimedBy = async (hash: Hex) => {
    const [event] = parseEventLogs({
      abi: stakingPoolArtifact.abi,
      eventName: 'RewardsClaimed',
      logs: (await receipt(hash)).logs,
    });
    return event!.args.amount;
  };

  test('default: chain_stake calls stake() on the pool; chain_getStake reads the position there', async () => {
    const [poolBefore, proxyBefore] = await Promise.all([balance(devnet.stakingPool), balance(proxy)]);
    const response = await tx('chain_stake', [owner.address, '1000.0000 TOK'], token);
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toEqual({
      txId: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      stake: { quantity: '1000.0000 TOK', tier: 'silver', claimable: '0.0000 TOK' },
    });
    firstStake = body.txId;
    serviceSent.push(body.txId);
    const onChain = await transactionOf(devnet, body.txId);
    expect(onChain).toMatchObject({
      from: proxy.toLowerCase(),
      to: devnet.stakingPool.toLowerCase(),
      value: parseEther('1000'),
      input: toFunctionSelector('stake()'),
    });
    expect(await balance(devnet.stakingPool)).toBe(poolBefore + parseEther('1000'));
    expect(await balance(proxy)).toBe(proxyBefore - parseEther('1000') - (await gasPaid(body.txId)));
    expect((await poolPosition(devnet, proxy)).staked).toBe(parseEther('1000'));

    const events = await stakeEvents();
    expect(events.filter((e) => e.tx_hash === body.txId)).toMatchObject([
      { kind: 'stake', amount_wei: parseEther('1000').toString() },
    ]);

    // Public: no session needed; lowercase addresses work too; it names where to check it.
    const read = await tx('chain_getStake', [owner.address.toLowerCase()]);
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual({
      stake: { quantity: '1000.0000 TOK', tier: 'silver', claimable: '0.0000 TOK' },
      unbonding: [],
      pool: { address: devnet.stakingPool, account: proxy },
    });
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

  test('error: malformed amounts and more than the balance are 400, nothing sent', async () => {
    const before = await stakeEvents();
    const [proxyBefore, nonceBefore] = await Promise.all([balance(proxy), nonce(proxy)]);
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
    expect([await balance(proxy), await nonce(proxy)]).toEqual([proxyBefore, nonceBefore]);
    expect((await tx('chain_getStake', [owner.address])).json().stake.quantity).toBe('1000.0000 TOK');
    expect((await tx('chain_getStake', ['0x1234'])).statusCode).toBe(400);
    expect((await tx('chain_nope', [])).statusCode).toBe(400);
  });

  test('error: bad input is a 4xx with its code and sends no transaction', async () => {
    const fresh = privateKeyToAccount(generatePrivateKey());
    const jwt = await signIn(t.app, fresh);
    const freshProxy = await proxyAddressOf(t.app, jwt);
    await devnet.fund(freshProxy, { nativeWei: parseEther('5') });
    const nonceBefore = await nonce(freshProxy);
    const cases: [string, unknown[], number, string][] = [
      ['chain_stake', [fresh.address, '1.00001 TOK'], 400, 'invalid_request'],
      ['chain_stake', [fresh.address, '0.0000 TOK'], 400, 'invalid_request'],
      ['chain_unstake', [fresh.address, '1.0000 TOK'], 400, 'exceeds_stake'],
      ['chain_claim', [fresh.address], 409, 'nothing_to_claim'],
    ];
    for (const [method, params, status, code] of cases) {
      const response = await tx(method, params, jwt);
      expect({ method, status: response.statusCode, code: response.json().error?.code }).toEqual({
        method,
        status,
        code,
      });
    }
    // Staked 1, unbonding 2 is above the position: refused before anything is signed.
    expect((await tx('chain_stake', [fresh.address, '1.0000 TOK'], jwt)).statusCode).toBe(200);
    const staked = await nonce(freshProxy);
    expect(staked).toBe(nonceBefore + 1);
    const above = await tx('chain_unstake', [fresh.address, '2.0000 TOK'], jwt);
    expect({ status: above.statusCode, code: above.json().error.code }).toEqual({
      status: 400,
      code: 'exceeds_stake',
    });
    expect(await nonce(freshProxy)).toBe(staked);
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

  test('behavior: a stake mined whose row still says broadcast is not counted twice against the next one', async () => {
    // The race behind a rare [200, 400, 400] above: the first stake is in the latest block, the
    // outbox has not marked its row yet, and the second's check took it from that balance again.
    const spare = privateKeyToAccount(generatePrivateKey());
    const spareToken = await signIn(t.app, spare);
    const spareProxy = await proxyAddressOf(t.app, spareToken);
    await devnet.fund(spareProxy, { nativeWei: parseEther('10') });
    const staked = await tx('chain_stake', [spare.address, '6.0000 TOK'], spareToken);
    expect(staked.statusCode).toBe(200);
    serviceSent.push(staked.json().txId);
    const row = await t.db
      .selectFrom('chain_transfers')
      .select('id')
      .where('tx_hash', '=', staked.json().txId)
      .executeTakeFirstOrThrow();
    await t.db.updateTable('chain_transfers').set({ status: 'broadcast' }).where('id', '=', row.id).execute();
    const user = await t.app.inject({ url: '/api/user', headers: { authorization: `Bearer ${spareToken}` } });
    const spendable = await spendableBalance(t.db, createChainServices(t.config)!, {
      userId: (user.json() as { id: string }).id,
      proxyAddress: spareProxy,
      token: 'native',
      inFlightExcept: 'none',
    });
    expect(spendable).toBe(await devnet.context.client.getBalance({ address: spareProxy }));
    await t.db.updateTable('chain_transfers').set({ status: 'mined' }).where('id', '=', row.id).execute();
  });

  test("behavior: a year of chain time pays the pool's rewards to the last wei, once", async () => {
    const t0 = await timeOf(firstStake);
    await advanceChainTime(devnet, YEAR_S);
    // 1000 × 5% × 1.1 (silver), and a few seconds more
    const claimable = (await tx('chain_getStake', [owner.address])).json().stake.claimable as string;
    expect(Number.parseFloat(claimable)).toBeGreaterThanOrEqual(55);

    const more = await tx('chain_stake', [owner.address, '100.0000 TOK'], token);
    expect(more.statusCode).toBe(200);
    serviceSent.push(more.json().txId);
    expect(more.json().stake).toMatchObject({ quantity: '1100.0000 TOK', tier: 'silver' });
    const t1 = await timeOf(more.json().txId);
    /** Scaled rewards of the position at chain time `at` (1000 from t0, 1100 from t1). */
    const scaledAt = (at: bigint) =>
      parseEther('1000') * SILVER * (t1 - t0) + parseEther('1100') * SILVER * (at - t1);

    const proxyBefore = await balance(proxy);
    const claimed = await tx('chain_claim', [owner.address], token);
    expect(claimed.statusCode).toBe(200);
    const claimTx = claimed.json().txId as Hex;
    serviceSent.push(claimTx);
    const paid = await claimedBy(claimTx);
    expect(paid).toBeGreaterThanOrEqual(parseEther('55'));
    expect(claimed.json()).toMatchObject({
      claimed: formatTokenAmount(paid, 'TOK'),
      stake: { quantity: '1100.0000 TOK', tier: 'silver', claimable: '0.0000 TOK' },
    });
    // What the service asked for is the pool's claimable at a block between the stake and the claim.
    const t2 = await timeOf(claimTx);
    const seconds = Array.from({ length: Number(t2 - t1) + 1 }, (_, i) => t1 + BigInt(i));
    expect(seconds.some((at) => scaledAt(at) / REWARD_SCALE === paid)).toBe(true);
    expect(await balance(proxy)).toBe(proxyBefore + paid - (await gasPaid(claimTx)));
    expect((await transactionOf(devnet, claimTx)).to).toBe(devnet.stakingPool.toLowerCase());

    // Claimed: what accrued since is below 0.0001, nothing to claim, nothing sent.
    const nonceBefore = await nonce(proxy);
    const second = await tx('chain_claim', [owner.address], token);
    expect({ status: second.statusCode, code: second.json().error?.code }).toEqual({
      status: 409,
      code: 'nothing_to_claim',
    });
    expect(await nonce(proxy)).toBe(nonceBefore);

    // Half a year more at 1100 silver: 30.25, plus the seconds, exactly what the pool accrued.
    await advanceChainTime(devnet, YEAR_S / 2);
    const advanced = (await chain().getBlock({ blockTag: 'latest' })).timestamp;
    const half = await tx('chain_claim', [owner.address], token);
    expect(half.statusCode).toBe(200);
    serviceSent.push(half.json().txId);
    const halfPaid = await claimedBy(half.json().txId);
    const t3 = await timeOf(half.json().txId);
    const later = Array.from({ length: Number(t3 - advanced) + 1 }, (_, i) => advanced + BigInt(i));
    expect(later.some((at) => (scaledAt(at) - paid * REWARD_SCALE) / REWARD_SCALE === halfPaid)).toBe(true);
    expect(halfPaid).toBeGreaterThanOrEqual(parseEther('30.25'));
  });

  test('behavior: unstake drops the tier at once; the pool pays it back after its unbonding period', async () => {
    const response = await tx('chain_unstake', [owner.address, '1050.0000 TOK'], token);
    expect(response.statusCode).toBe(200);
    serviceSent.push(response.json().txId);
    expect(response.json().stake).toMatchObject({ quantity: '50.0000 TOK', tier: 'none' });
    expect(response.json().unbonding).toMatchObject({ amount: '1050.0000 TOK' });
    expect(await tierOf(t.db, owner.address)).toBe('none');
    expect((await tx('chain_getStake', [owner.address])).json().unbonding).toEqual([
      { amount: '1050.0000 TOK', releaseAt: response.json().unbonding.releaseAt },
    ]);

    const proxyBefore = await balance(proxy);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(await balance(proxy)).toBe(proxyBefore); // still unbonding
    await advanceChainTime(devnet, UNBONDING_PERIOD_S);
    const released = () =>
      t.db.selectFrom('unbondings').select(['status', 'tx_hash']).where('status', '=', 'released').execute();
    await until(async () => (await released()).length === 1, 20_000);
    const [row] = await released();
    serviceSent.push(row!.tx_hash as Hex);
    expect(await transactionOf(devnet, row!.tx_hash as Hex)).toMatchObject({
      from: proxy.toLowerCase(),
      to: devnet.stakingPool.toLowerCase(),
      input: toFunctionSelector('withdraw()'),
    });
    expect(await balance(proxy)).toBe(
      proxyBefore + parseEther('1050') - (await gasPaid(row!.tx_hash as Hex)),
    );
    expect((await tx('chain_getStake', [owner.address])).json().unbonding).toEqual([]);
  });

  test('behavior: a withdraw the proxy wallet cannot pay the gas for is refused once, then waits', async () => {
    const poor = privateKeyToAccount(generatePrivateKey());
    const jwt = await signIn(t.app, poor);
    const poorProxy = await proxyAddressOf(t.app, jwt);
    await devnet.fund(poorProxy, { nativeWei: parseEther('2') });
    expect((await tx('chain_stake', [poor.address, '1.0000 TOK'], jwt)).statusCode).toBe(200);
    expect((await tx('chain_unstake', [poor.address, '1.0000 TOK'], jwt)).statusCode).toBe(200);
    // Everything left in the proxy wallet goes elsewhere: nothing pays a withdraw's gas.
    const user = await t.db
      .selectFrom('users')
      .select('id')
      .where('address', '=', poor.address)
      .executeTakeFirstOrThrow();
    const wallet = await loadProxyAccount(t.db, t.app.ctx.keyring, user.id);
    const left = await balance(poorProxy);
    const fee = 21_000n * GAS_PRICE_WEI;
    const hash = await chain().sendRawTransaction({
      serializedTransaction: await wallet.signTransaction({
        type: 'legacy',
        chainId: CHAIN_ID,
        nonce: await nonce(poorProxy),
        gas: 21_000n,
        gasPrice: GAS_PRICE_WEI,
        to: devnet.funder.address,
        value: left - fee,
      }),
    });
    await chain().waitForTransactionReceipt({ hash });
    const withdraws = () =>
      t.db
        .selectFrom('chain_transfers')
        .select('status')
        .where('purpose', '=', POOL_PURPOSES.withdraw)
        .where('ref', '=', user.id)
        .execute();
    await advanceChainTime(devnet, UNBONDING_PERIOD_S);
    await until(async () => (await withdraws()).length === 1, 20_000);
    await new Promise((resolve) => setTimeout(resolve, 1_000)); // ten passes of the timer
    expect((await withdraws()).map((w) => w.status)).toEqual(['cancelled']);
    // Gas arrives; after the wait the next pass withdraws it.
    await devnet.fund(poorProxy, { nativeWei: parseEther('0.1') });
    t.clock.advance(RELEASE_RETRY_AFTER_REFUSAL_MS);
    await until(async () => (await withdraws()).some((w) => w.status === 'mined'), 20_000);
    expect((await tx('chain_getStake', [poor.address])).json().unbonding).toEqual([]);
  });

  test('default: chain_getTiers is public and reads the pool', async () => {
    const response = await tx('chain_getTiers', []);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({
      symbol: 'TOK',
      pool: devnet.stakingPool,
      baseApyBps: 500,
      unbondingPeriodS: UNBONDING_PERIOD_S,
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
  expect(serviceSent.length).toBeGreaterThanOrEqual(7);
  for (const hash of serviceSent) expect(hashes.has(hash)).toBe(true);
});
