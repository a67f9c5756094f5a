/**
 * Money integrity against a real anvil, on SQLite and PostgreSQL: no credit without tokens behind
 * it. Each attack here created credits from nothing before the fix (issue 14): a withdrawal of an
 * uncredited deposit to the user's own proxy wallet, then a top-up of the deposit and of each
 * withdrawal's hash (40 USD from 10 tokens); the same hop through a second user's proxy wallet;
 * a deposit moved out before its top-up. And across two replicas on one PostgreSQL: the daily
 * withdrawal limit, a withdrawal racing a top-up of the same deposit, and one wallet's nonces.
 */
import { randomUUID } from 'node:crypto';
import { encodeFunctionData, erc20Abi, type Hex, parseEther, parseUnits } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { StableSymbol } from '../coordinator/src/chain/constants.js';
import { createChainServices } from '../coordinator/src/chain/create-chain-services.js';
import { sendTransaction } from '../coordinator/src/chain/send-transaction.js';
import { openStore } from '../coordinator/src/db/store.js';
import { reconcile } from '../coordinator/src/reconcile/reconcile.js';
import {
  createTestApp,
  describeBackends,
  signIn,
  type TestApp,
  type TestBackend,
  testBackends,
} from '../coordinator/src/testing/index.js';
import { createKeyring } from '../coordinator/src/wallets/keyring.js';
import { loadProxyAccount } from '../coordinator/src/wallets/load-proxy-account.js';
import { chainOverrides, type Devnet, proxyAddressOf, startDevnet, tokenBalance } from './chain-fixture.js';

let devnet: Devnet;
beforeAll(async () => {
  // Blocks every 0.1 s, not the spec chain's 0.5 s: the tests wait for blocks, and none of what
  // they check depends on the block time.
  devnet = await startDevnet({ blockTimeS: 0.1 });
});
afterAll(async () => devnet?.stop());

const USDC = 'USDC.s' satisfies StableSymbol;
const usdc = (amount: string) => parseUnits(amount, 6);
/** Somewhere outside the service: a fresh EOA. */
const outside = () => privateKeyToAccount(generatePrivateKey()).address;

/** A deposit from outside (a dev account, not a wallet the service manages). */
const deposit = async (to: `0x${string}`, amount: bigint): Promise<Hex> =>
  (
    await sendTransaction(devnet.context, {
      account: devnet.accounts[0]!.account,
      to: devnet.tokens[USDC],
      data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [to, amount] }),
    })
  ).hash;

type User = { jwt: string; proxy: `0x${string}`; id: string };

/** Signs a fresh wallet in on `app`; unless told not to, gives its proxy wallet native for gas (uncredited). */
async function newUser(t: TestApp, { gas = true } = {}): Promise<User> {
  const account = privateKeyToAccount(generatePrivateKey());
  const jwt = await signIn(t.app, account);
  const proxy = await proxyAddressOf(t.app, jwt);
  const { id } = await t.db
    .selectFrom('users')
    .select('id')
    .where('address', '=', account.address)
    .executeTakeFirstOrThrow();
  if (gas) await devnet.fund(proxy, { nativeWei: parseEther('1') });
  return { jwt, proxy, id };
}

const topup = (t: TestApp, user: User, paymentId: Hex, amountUsd: number) =>
  t.app.inject({
    method: 'POST',
    url: '/api/user/topup',
    headers: { authorization: `Bearer ${user.jwt}` },
    payload: { paymentId, source: USDC, amountUsd },
  });

const withdraw = (t: TestApp, user: User, to: string, amount: string, token: string = USDC) =>
  t.app.inject({
    method: 'POST',
    url: '/api/keys/proxy/withdraw',
    headers: { authorization: `Bearer ${user.jwt}` },
    payload: { to, token, amount },
  });

const creditsNano = async (t: TestApp, user: User) => (await t.ledger.balance(user.id)).balanceNano;

/** The reconciliation check over a test app's store and the devnet: the list of differences. */
async function differences(t: TestApp) {
  const report = await reconcile({
    db: t.db,
    services: createChainServices(t.config),
    staleHoldMs: 60_000,
    now: Date.now(),
  });
  return report.differences;
}

describeBackends('money integrity', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(backend, {
      label: 'money',
      overrides: chainOverrides(devnet, { chain: { withdrawDailyLimitNano: 1_000_000_000_000n } }),
    });
  });
  afterAll(async () => {
    // Whatever the attacks above did, the books hold at the end.
    if (t) expect(await differences(t)).toEqual([]);
    await t?.close();
  });

  test('attack: a self-withdraw then top-ups of every hash credit exactly the 10 tokens that exist', async () => {
    const user = await newUser(t);
    const paid = await deposit(user.proxy, usdc('10'));
    for (let i = 0; i < 3; i++) {
      const self = await withdraw(t, user, user.proxy, '10');
      expect(self.statusCode).toBe(400);
      expect(self.json().error).toMatchObject({ code: 'recipient_not_allowed', param: 'to' });
    }
    const credited = await topup(t, user, paid, 10);
    expect(credited.statusCode).toBe(200);
    expect(await creditsNano(t, user)).toBe(10_000_000_000n);
    expect(await tokenBalance(devnet, USDC, user.proxy)).toBe(usdc('10'));
  });

  test('attack: tokens moved between proxy wallets are nobody’s deposit', async () => {
    // What the old withdraw route let a user do, signed here with the proxy key itself.
    const [one, two] = [await newUser(t), await newUser(t)];
    const paid = await deposit(one.proxy, usdc('10'));
    const refused = await withdraw(t, one, two.proxy, '10');
    expect(refused.json().error?.code).toBe('recipient_not_allowed');

    const keyring = createKeyring(Buffer.from(t.config.masterKey!, 'hex'));
    const proxyOne = await loadProxyAccount(t.db, keyring, one.id);
    const hop = await sendTransaction(devnet.context, {
      account: proxyOne,
      to: devnet.tokens[USDC],
      data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [two.proxy, usdc('10')] }),
    });
    const asDeposit = await topup(t, two, hop.hash, 10);
    expect(asDeposit.statusCode).toBe(400);
    expect(asDeposit.json().error).toMatchObject({ code: 'payment_not_external', param: 'paymentId' });
    // The original deposit's tokens left wallet one: nothing stands behind it any more.
    const original = await topup(t, one, paid, 10);
    expect(original.statusCode).toBe(409);
    expect(original.json().error).toMatchObject({ code: 'payment_spent', param: 'paymentId' });
    expect([await creditsNano(t, one), await creditsNano(t, two)]).toEqual([0n, 0n]);

    // A wallet paying itself is no deposit either.
    const proxyTwo = await loadProxyAccount(t.db, keyring, two.id);
    const self = await sendTransaction(devnet.context, {
      account: proxyTwo,
      to: devnet.tokens[USDC],
      data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [two.proxy, usdc('10')] }),
    });
    expect((await topup(t, two, self.hash, 10)).json().error?.code).toBe('payment_not_external');
  });

  test('attack: a deposit withdrawn before its top-up credits nothing', async () => {
    const user = await newUser(t);
    const paid = await deposit(user.proxy, usdc('10'));
    const out = await withdraw(t, user, outside(), '10');
    expect(out.statusCode).toBe(200);
    const late = await topup(t, user, paid, 10);
    expect(late.statusCode).toBe(409);
    expect(late.json().error.code).toBe('payment_spent');
    expect(await creditsNano(t, user)).toBe(0n);
    expect(
      await t.db.selectFrom('topups').select('payment_id').where('user_id', '=', user.id).execute(),
    ).toEqual([]);
  });

  test('behavior: a second deposit cannot stand on tokens the first one backs', async () => {
    const user = await newUser(t);
    const first = await deposit(user.proxy, usdc('10'));
    expect((await topup(t, user, first, 10)).statusCode).toBe(200);
    const second = await deposit(user.proxy, usdc('5'));
    // The 5 uncredited tokens go out; the 10 credited ones cannot.
    expect((await withdraw(t, user, outside(), '6')).json().error?.code).toBe('insufficient_funds');
    expect((await withdraw(t, user, outside(), '5')).statusCode).toBe(200);
    expect((await topup(t, user, second, 5)).json().error?.code).toBe('payment_spent');
    // A repeat of the credited one still answers with its original result.
    const again = await topup(t, user, first, 10);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toMatchObject({ status: 'credited', creditedUsd: 10 });
    expect(await creditsNano(t, user)).toBe(10_000_000_000n);
    expect(await tokenBalance(devnet, USDC, user.proxy)).toBe(usdc('10'));
  });

  test('error: withdrawals to any wallet the service manages are refused, and record nothing', async () => {
    const [user, other] = [await newUser(t), await newUser(t)];
    await deposit(user.proxy, usdc('3'));
    for (const to of [
      user.proxy,
      other.proxy,
      devnet.vaults.staking.address,
      devnet.vaults.rewards.address,
      devnet.stakingPool,
    ]) {
      const response = await withdraw(t, user, to.toLowerCase(), '1');
      expect({ status: response.statusCode, code: response.json().error?.code }).toEqual({
        status: 400,
        code: 'recipient_not_allowed',
      });
    }
    const rows = await t.db.selectFrom('withdrawals').select('id').where('user_id', '=', user.id).execute();
    expect(rows).toEqual([]);
  });

  test('behavior: a token withdrawal pays its gas from native token that backs no credit', async () => {
    const user = await newUser(t, { gas: false });
    const { jwt, proxy } = user;
    // The only native token in the wallet is a credited top-up: it backs credits, not gas.
    const native = await sendTransaction(devnet.context, {
      account: devnet.accounts[0]!.account,
      to: proxy,
      value: parseEther('1'),
    });
    const credited = await t.app.inject({
      method: 'POST',
      url: '/api/user/topup',
      headers: { authorization: `Bearer ${jwt}` },
      payload: { paymentId: native.hash, source: 'native', amountUsd: 2.5 },
    });
    expect(credited.statusCode).toBe(200);
    await deposit(proxy, usdc('4'));
    expect((await withdraw(t, user, outside(), '4')).json().error?.code).toBe('insufficient_funds');
    await devnet.fund(proxy, { nativeWei: parseEther('0.1') });
    expect((await withdraw(t, user, outside(), '4')).statusCode).toBe(200);
  });

  test('behavior: the reconciliation check finds a corrupted entry and a wallet whose tokens left', async () => {
    const user = await newUser(t);
    const paid = await deposit(user.proxy, usdc('2'));
    expect((await topup(t, user, paid, 2)).statusCode).toBe(200);
    expect(await differences(t)).toEqual([]);

    // One entry's amount off by a nanousd.
    const entry = await t.db
      .selectFrom('ledger_entries')
      .select(['id', 'amount'])
      .where('account_id', '=', user.id)
      .executeTakeFirstOrThrow();
    const amount = BigInt(entry.amount);
    await t.db
      .updateTable('ledger_entries')
      .set({ amount: amount + 1n })
      .where('id', '=', entry.id)
      .execute();
    // The credited tokens taken out behind the service's back (with the proxy key).
    const keyring = createKeyring(Buffer.from(t.config.masterKey!, 'hex'));
    await sendTransaction(devnet.context, {
      account: await loadProxyAccount(t.db, keyring, user.id),
      to: devnet.tokens[USDC],
      data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [outside(), usdc('1')] }),
    });
    const found = await differences(t);
    expect(found).toEqual([
      { check: 'ledger_balance', account: user.id, balance: '2000000000', sumOfEntries: '2000000001' },
      {
        check: 'wallet_backing',
        wallet: user.proxy,
        user: user.id,
        token: USDC,
        onChain: '1000000',
        credited: '2000000',
      },
    ]);
    // Put both back, so the suite's final check holds.
    await t.db.updateTable('ledger_entries').set({ amount }).where('id', '=', entry.id).execute();
    await deposit(user.proxy, usdc('1'));
    expect(await differences(t)).toEqual([]);
  });
});

/** A second coordinator on the same PostgreSQL schema: its own pool, signer queue and chain client. */
async function replicaOf(backend: TestBackend, t: TestApp): Promise<TestApp> {
  const { databaseUrl, databaseSchema } = t.store;
  return createTestApp(
    {
      ...backend,
      open: async () => {
        const store = openStore({ pgUrl: databaseUrl!, schema: databaseSchema! });
        return { ...t.store, store, db: store.db, close: () => store.close() };
      },
    },
    {
      overrides: {
        masterKey: t.config.masterKey,
        ...chainOverrides(devnet, { chain: structuredClone(t.config.chain) }),
      },
    },
  );
}

const postgres = testBackends().find((b) => b.name === 'postgres')!;

describe.skipIf(postgres.skip)('money integrity across two replicas [postgres]', () => {
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    a = await createTestApp(postgres, {
      label: 'money2',
      overrides: chainOverrides(devnet, { chain: { withdrawDailyLimitNano: 15_000_000_000n } }),
    });
    b = await replicaOf(postgres, a);
  });
  afterAll(async () => {
    if (a) expect(await differences(a)).toEqual([]);
    await b?.close();
    await a?.close();
  });

  const TRIALS = 6;

  test('race: the daily withdrawal limit holds when withdrawals reach both replicas at once', async () => {
    for (let trial = 0; trial < TRIALS; trial++) {
      const user = await newUser(a);
      await deposit(user.proxy, usdc('20'));
      const [onA, onB] = await Promise.all([
        withdraw(a, user, outside(), '8'),
        withdraw(b, user, outside(), '8'),
      ]);
      const outcomes = [onA, onB].map((r) => `${r.statusCode} ${r.json().error?.code ?? 'sent'}`).sort();
      expect(outcomes).toEqual(['200 sent', '429 withdraw_limit_exceeded']);
      expect(await tokenBalance(devnet, USDC, user.proxy)).toBe(usdc('12'));
    }
  });

  test('race: a withdrawal and a top-up of one deposit on two replicas: credits never exceed the tokens', async () => {
    for (let trial = 0; trial < TRIALS; trial++) {
      const user = await newUser(a);
      const paid = await deposit(user.proxy, usdc('10'));
      const [out, credit] = await Promise.all([withdraw(a, user, outside(), '10'), topup(b, user, paid, 10)]);
      const sent = out.statusCode === 200;
      const credited = credit.statusCode === 200;
      // Exactly one wins; the loser says why.
      expect(sent !== credited).toBe(true);
      if (sent) expect(credit.json().error.code).toBe('payment_spent');
      else expect(out.json().error.code).toBe('insufficient_funds');
      const onChain = await tokenBalance(devnet, USDC, user.proxy);
      expect((await creditsNano(a, user)) / 1000n).toBeLessThanOrEqual(onChain);
      expect(onChain).toBe(credited ? usdc('10') : 0n);
    }
  });

  test('race: withdrawals of one wallet through both replicas never collide on a nonce', async () => {
    const user = await newUser(a);
    await deposit(user.proxy, usdc('10'));
    const responses = await Promise.all(
      Array.from({ length: 6 }, (_, i) => withdraw(i % 2 ? b : a, user, outside(), '1')),
    );
    expect(responses.map((r) => r.statusCode)).toEqual(Array(6).fill(200));
    const hashes = new Set(responses.map((r) => r.json().txId as string));
    expect(hashes.size).toBe(6);
    expect(await tokenBalance(devnet, USDC, user.proxy)).toBe(usdc('4'));
    // A lease left by a replica that died mid-send expires; until then the wallet waits, not fails.
    const lease = await a.db.selectFrom('wallet_locks').selectAll().execute();
    expect(lease).toEqual([]);
    await a.db
      .insertInto('wallet_locks')
      .values({ address: user.proxy, holder: randomUUID(), expires_at: Date.now() + 300 })
      .execute();
    expect((await withdraw(b, user, outside(), '1')).statusCode).toBe(200);
  });
});
