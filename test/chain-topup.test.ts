/**
 * Top-up and withdraw against a real anvil (one per file), on SQLite and PostgreSQL: a transfer to
 * the proxy wallet is verified on chain and credited exactly once, whatever the client claims.
 */
import { encodeFunctionData, erc20Abi, type Hash, type Hex, parseEther, parseUnits } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { CHAIN_ID, GAS_PRICE_WEI, type StableSymbol } from '../coordinator/src/chain/constants.js';
import { sendTransaction } from '../coordinator/src/chain/send-transaction.js';
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
  tokenBalance,
} from './chain-fixture.js';

let devnet: Devnet;
beforeAll(async () => {
  // Blocks every 0.1 s, not the spec chain's 0.5 s: the tests wait for blocks, and none of what
  // they check depends on the block time.
  devnet = await startDevnet({ blockTimeS: 0.1 });
});
afterAll(async () => devnet?.stop());

/** Hashes of transactions the coordinator itself sent (withdrawals), checked at the end. */
const serviceSent: Hex[] = [];

const transferToken = (symbol: StableSymbol, to: `0x${string}`, amount: bigint) =>
  sendTransaction(devnet.context, {
    account: devnet.accounts[0]!.account,
    to: devnet.tokens[symbol],
    data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [to, amount] }),
  });

describeBackends('top-up', (backend) => {
  let t: TestApp;
  let pending: TestApp;
  let token: string;
  let otherToken: string;
  let proxy: `0x${string}`;
  const user = privateKeyToAccount(generatePrivateKey());
  const other = privateKeyToAccount(generatePrivateKey());

  beforeAll(async () => {
    t = await createTestApp(backend, { label: 'topup', overrides: chainOverrides(devnet) });
    token = await signIn(t.app, user);
    otherToken = await signIn(t.app, other);
    proxy = await proxyAddressOf(t.app, token);
  });
  afterAll(async () => {
    await pending?.app.close();
    if (t) await expectBooksBalanced(t.app.ctx, t.config);
    await t?.close();
  });

  const post = (jwt: string, payload: object) =>
    t.app.inject({
      method: 'POST',
      url: '/api/user/topup',
      headers: { authorization: `Bearer ${jwt}` },
      payload,
    });
  const balanceNano = async () => (await t.ledger.balance(userId())).balanceNano;
  let cachedUserId: string | undefined;
  const userId = () => {
    if (!cachedUserId) throw new Error('user id unknown');
    return cachedUserId;
  };

  test('default: a real USDC.s transfer to the proxy wallet is credited exactly', async () => {
    const row = await t.db
      .selectFrom('users')
      .select('id')
      .where('address', '=', user.address)
      .executeTakeFirstOrThrow();
    cachedUserId = row.id;
    const { hash } = await transferToken('USDC.s', proxy, parseUnits('25.5', 6));
    const response = await post(token, { paymentId: hash, source: 'USDC.s', amountUsd: 25.5 });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      status: 'credited',
      paymentId: hash,
      source: 'USDC.s',
      amount: '25.5',
      creditedUsd: 25.5,
      balance: 25.5,
    });
    expect(await balanceNano()).toBe(25_500_000_000n);
    const me = await t.app.inject({
      method: 'GET',
      url: '/api/user',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(me.json().credits.balance).toBe(25.5);

    // The same paymentId again: the same result, no second credit.
    const again = await post(token, { paymentId: hash, source: 'USDC.s', amountUsd: 25.5 });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual(response.json());
    expect(await balanceNano()).toBe(25_500_000_000n);

    // By another user: 409.
    const stolen = await post(otherToken, { paymentId: hash, source: 'USDC.s', amountUsd: 25.5 });
    expect(stolen.statusCode).toBe(409);
    expect(stolen.json().error).toMatchObject({ code: 'payment_already_used', param: 'paymentId' });
  });

  test('error: each refusal has its code and records nothing', async () => {
    const before = await balanceNano();
    const expectError = async (payload: object, status: number, code: string) => {
      const response = await post(token, payload);
      expect({ status: response.statusCode, code: response.json().error?.code }).toEqual({ status, code });
      expect(JSON.stringify(response.json())).not.toMatch(/127\.0\.0\.1|viem|RPC|stack/i);
    };

    const elsewhere = await transferToken('USDC.s', devnet.accounts[1]!.address, 1_000_000n);
    await expectError(
      { paymentId: elsewhere.hash, source: 'USDC.s', amountUsd: 1 },
      400,
      'payment_wrong_recipient',
    );

    const usdt = await transferToken('USDT.s', proxy, 2_000_000n);
    await expectError({ paymentId: usdt.hash, source: 'USDC.s', amountUsd: 2 }, 400, 'payment_wrong_token');

    // A transaction that reverts on chain (a transfer of more than the sender holds).
    const poor = privateKeyToAccount(generatePrivateKey());
    await devnet.fund(poor.address, { nativeWei: parseEther('1') });
    const failed: Hash = await devnet.context.client.sendRawTransaction({
      serializedTransaction: await poor.signTransaction({
        type: 'legacy',
        chainId: CHAIN_ID,
        gasPrice: GAS_PRICE_WEI,
        gas: 100_000n,
        nonce: 0,
        to: devnet.tokens['USDC.s'],
        data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [proxy, 5n] }),
      }),
    });
    await devnet.context.client.waitForTransactionReceipt({ hash: failed });
    await expectError({ paymentId: failed, source: 'USDC.s', amountUsd: 0 }, 400, 'payment_failed');

    const real = await transferToken('USD.s', proxy, parseUnits('10', 6));
    await expectError({ paymentId: real.hash, source: 'USD.s', amountUsd: 11 }, 400, 'amount_mismatch');
    await expectError(
      { paymentId: `0x${'cd'.repeat(32)}`, source: 'USD.s', amountUsd: 1 },
      404,
      'payment_not_found',
    );
    await expectError({ paymentId: '0x1234', source: 'USD.s', amountUsd: 1 }, 400, 'invalid_request');
    await expectError({ paymentId: real.hash, source: 'DAI', amountUsd: 10 }, 400, 'invalid_request');
    expect(await balanceNano()).toBe(before);
    const rows = await t.db
      .selectFrom('topups')
      .select('payment_id')
      .where('user_id', '=', userId())
      .execute();
    expect(rows.map((r) => r.payment_id)).not.toContain(real.hash.toLowerCase());

    // Refused for the inflated amount, the same payment is still creditable with the true one.
    const ok = await post(token, { paymentId: real.hash, source: 'USD.s', amountUsd: 10 });
    expect(ok.statusCode).toBe(200);
    expect(await balanceNano()).toBe(before + 10_000_000_000n);
  });

  test('behavior: a native top-up is priced by the configured price', async () => {
    const before = await balanceNano();
    const { hash } = await sendTransaction(devnet.context, {
      account: devnet.accounts[0]!.account,
      to: proxy,
      value: parseEther('2'),
    });
    const response = await post(token, { paymentId: hash, source: 'native', amountUsd: 5 });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ status: 'credited', amount: '2', creditedUsd: 5 });
    expect(await balanceNano()).toBe(before + 5_000_000_000n);
  });

  test('behavior: 202 pending until the configured confirmations, nothing recorded', async () => {
    pending = await createTestApp(
      { ...backend, open: async () => ({ ...t.store, close: async () => {} }) },
      {
        overrides: {
          masterKey: t.config.masterKey,
          ...chainOverrides(devnet, { chain: { confirmations: 1_000_000 } }),
        },
      },
    );
    const { hash } = await transferToken('USDT.s', proxy, parseUnits('3', 6));
    const response = await pending.app.inject({
      method: 'POST',
      url: '/api/user/topup',
      headers: { authorization: `Bearer ${token}` },
      payload: { paymentId: hash, source: 'USDT.s', amountUsd: 3 },
    });
    expect(response.statusCode).toBe(202);
    expect(response.json()).toMatchObject({
      status: 'pending',
      paymentId: hash,
      amount: '3',
      creditedUsd: 0,
    });
    const row = await t.db.selectFrom('topups').selectAll().where('payment_id', '=', hash).executeTakeFirst();
    expect(row).toBeUndefined();
  });

  test('behavior: 50 concurrent top-ups with one paymentId credit once', async () => {
    const before = await balanceNano();
    const { hash } = await transferToken('USDT.s', proxy, parseUnits('7', 6));
    const responses = await Promise.all(
      Array.from({ length: 50 }, () => post(token, { paymentId: hash, source: 'USDT.s', amountUsd: 7 })),
    );
    expect(responses.map((r) => r.statusCode)).toEqual(Array(50).fill(200));
    for (const r of responses) expect(r.json()).toMatchObject({ status: 'credited', creditedUsd: 7 });
    expect(await balanceNano()).toBe(before + 7_000_000_000n);
    const entries = await t.db
      .selectFrom('ledger_entries')
      .select('id')
      .where('ref', '=', hash.toLowerCase())
      .execute();
    expect(entries).toHaveLength(1);
  });

  test('behavior: withdraw sends from the proxy wallet within limits, with an audit record', async () => {
    const headers = { authorization: `Bearer ${token}` };
    const to = privateKeyToAccount(generatePrivateKey()).address;
    await devnet.fund(proxy, { nativeWei: parseEther('1'), stables: { 'USDC.s': parseUnits('40', 6) } });
    const withdraw = (payload: object) =>
      t.app.inject({ method: 'POST', url: '/api/keys/proxy/withdraw', headers, payload });

    const sent = await withdraw({ to, token: 'USDC.s', amount: '12.5' });
    expect(sent.statusCode).toBe(200);
    expect(sent.json()).toMatchObject({ status: 'sent', to, token: 'USDC.s', amount: '12.5' });
    serviceSent.push(sent.json().txId);
    expect(await tokenBalance(devnet, 'USDC.s', to)).toBe(12_500_000n);

    // The 25.5 USDC.s credited as a top-up back the credits: only 40 - 12.5 = 27.5 more may leave.
    const tooMuch = await withdraw({ to, token: 'USDC.s', amount: '27.6' });
    expect(tooMuch.statusCode).toBe(400);
    expect(tooMuch.json().error.code).toBe('insufficient_funds');

    const native = await withdraw({ to, token: 'native', amount: '0.25' });
    expect(native.statusCode).toBe(200);
    serviceSent.push(native.json().txId);
    expect(await devnet.context.client.getBalance({ address: to })).toBe(parseEther('0.25'));

    for (const bad of [
      { to: '0x1234', token: 'USDC.s', amount: '1' },
      { to, token: 'DAI', amount: '1' },
      { to, token: 'USDC.s', amount: '1.0000001' },
      { to, token: 'USDC.s', amount: '-1' },
      { to, token: 'USDC.s', amount: '0' },
    ]) {
      const response = await withdraw(bad);
      expect(response.statusCode).toBe(400);
    }
    const audit = await t.db.selectFrom('withdrawals').selectAll().where('to_address', '=', to).execute();
    expect(audit.map((a) => [a.token, a.amount, a.status, a.tx_hash !== null]).sort()).toEqual(
      [
        ['USDC.s', '12500000', 'sent', true],
        ['USDC.s', '27600000', 'refused', false],
        ['native', parseEther('0.25').toString(), 'sent', true],
      ].sort(),
    );
  });

  test('error: over the daily limit is 429 withdraw_limit_exceeded', async () => {
    const limited = await createTestApp(
      { ...backend, open: async () => ({ ...t.store, close: async () => {} }) },
      {
        overrides: {
          masterKey: t.config.masterKey,
          ...chainOverrides(devnet, { chain: { withdrawDailyLimitNano: 20_000_000_000n } }),
        },
      },
    );
    try {
      const response = await limited.app.inject({
        method: 'POST',
        url: '/api/keys/proxy/withdraw',
        headers: { authorization: `Bearer ${token}` },
        payload: { to: devnet.accounts[2]!.address, token: 'USDC.s', amount: '8' },
      });
      // 12.5 + 0.25 × 2.5 USD already sent today; 8 more would pass 20.
      expect(response.statusCode).toBe(429);
      expect(response.json().error.code).toBe('withdraw_limit_exceeded');
    } finally {
      await limited.app.close();
    }
  });

  test('behavior: the deposit watcher credits a transfer by itself; the top-up call then repeats it', async () => {
    const watching = await createTestApp(
      { ...backend, open: async () => ({ ...t.store, close: async () => {} }) },
      {
        overrides: {
          masterKey: t.config.masterKey,
          ...chainOverrides(devnet, { chain: { watchDeposits: true, watchIntervalMs: 100 } }),
        },
      },
    );
    try {
      const cursor = () => t.db.selectFrom('chain_cursors').selectAll().executeTakeFirst();
      for (let i = 0; i < 50 && !(await cursor()); i++) await new Promise((r) => setTimeout(r, 100));
      const before = await balanceNano();
      const { hash } = await transferToken('USDC.s', proxy, parseUnits('4', 6));
      const credited = () =>
        t.db.selectFrom('topups').selectAll().where('payment_id', '=', hash.toLowerCase()).executeTakeFirst();
      for (let i = 0; i < 100 && (await credited())?.status !== 'credited'; i++) {
        await new Promise((r) => setTimeout(r, 100));
      }
      expect((await credited())?.status).toBe('credited');
      expect(await balanceNano()).toBe(before + 4_000_000_000n);
      const response = await post(token, { paymentId: hash, source: 'USDC.s', amountUsd: 4 });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toMatchObject({ status: 'credited', creditedUsd: 4 });
      expect(await balanceNano()).toBe(before + 4_000_000_000n);
    } finally {
      await watching.app.close();
      await t.db.deleteFrom('chain_cursors').execute();
    }
  });

  test('error: top-up without a session is 401', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/user/topup',
      payload: { paymentId: `0x${'ab'.repeat(32)}`, source: 'native', amountUsd: 1 },
    });
    expect(response.statusCode).toBe(401);
  });
});

test('behavior: every transaction the service sent is type 0 at 150 gwei on chain 800000', async () => {
  const transactions = await allTransactions(devnet);
  expect(transactions.length).toBeGreaterThan(0);
  for (const tx of transactions) {
    expect({ hash: tx.hash, type: tx.type, gasPrice: tx.gasPrice, chainId: tx.chainId }).toEqual({
      hash: tx.hash,
      type: 'legacy',
      gasPrice: GAS_PRICE_WEI,
      chainId: CHAIN_ID,
    });
  }
  const hashes = new Set(transactions.map((tx) => tx.hash));
  for (const hash of serviceSent) expect(hashes.has(hash)).toBe(true);
});
