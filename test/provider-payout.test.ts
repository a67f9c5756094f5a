/**
 * Payouts of node owners' earnings from the treasury, on a real anvil, on SQLite and PostgreSQL:
 * twenty payouts at once for earnings that cover three pay exactly three (on chain and in the
 * ledger); a retry with the same Idempotency-Key pays nothing again; the minimum, the daily cap and
 * a treasury that can't pay are refused with the earnings untouched — an amount over the earnings
 * answers 402 before the treasury is looked at, the zero address 400 before anything is sent, and
 * the treasury check counts payouts broadcast but not mined; an open payout left by a
 * crash (signed, never broadcast; or its nonce taken by another transaction) is settled from the
 * chain. The books and the chain agree at the end (reconcile).
 */
import { randomUUID } from 'node:crypto';
import { encodeFunctionData, erc20Abi, parseAbiItem, parseUnits } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { GAS_PRICE_WEI, STABLE_TRANSFER_GAS } from '../coordinator/src/chain/constants.js';
import { createChainServices } from '../coordinator/src/chain/create-chain-services.js';
import { sendTransaction } from '../coordinator/src/chain/send-transaction.js';
import { ENTRY_KINDS, providerAccountId } from '../coordinator/src/db/tables/ledger.js';
import { applyEntry } from '../coordinator/src/ledger/apply-entry.js';
import { settlePayouts } from '../coordinator/src/provider/settle-payouts.js';
import {
  createTestApp,
  expectBooksBalanced,
  signIn,
  type TestApp,
  testBackends,
  until,
} from '../coordinator/src/testing/index.js';
import { chainOverrides, type Devnet, startDevnet, tokenBalance } from './chain-fixture.js';

const USD = 1_000_000_000n;
const USDC = 'USDC.s';
const TRANSFER = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');

let devnet: Devnet;
beforeAll(async () => {
  // Blocks every 0.1 s, not the spec chain's 0.5 s: the tests wait for blocks, and none of what
  // they check depends on the block time.
  devnet = await startDevnet({ blockTimeS: 0.1 });
}, 60_000);
afterAll(async () => devnet?.stop());

describe.each(testBackends())('payouts [$name]', (backend) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp(backend, {
      label: 'payout',
      overrides: {
        ...chainOverrides(devnet),
        payouts: { minNano: 1_000n, dailyCapNano: 100n * USD, settleAfterMs: 100 },
      },
    });
  }, 60_000);

  afterAll(async () => {
    if (t) await expectBooksBalanced(t.app.ctx, t.config);
    await t?.close();
  });

  /** A signed-in owner whose earnings account holds `nano` (an operator's adjustment). */
  async function owner(nano: bigint) {
    const account = privateKeyToAccount(generatePrivateKey());
    const jwt = await signIn(t.app, account);
    if (nano > 0n) {
      await applyEntry(t.db, {
        accountId: providerAccountId(account.address),
        kind: ENTRY_KINDS.adjustment,
        amount: nano,
        ref: `seed-${randomUUID()}`,
        now: Date.now(),
      });
    }
    const payout = (body: object, key: string = randomUUID()) =>
      t.app.inject({
        method: 'POST',
        url: '/api/provider/payout',
        headers: { authorization: `Bearer ${jwt}`, 'idempotency-key': key },
        payload: body,
      });
    const earnings = async () => (await t.ledger.balance(providerAccountId(account.address))).balanceNano;
    return { address: account.address, jwt, payout, earnings };
  }

  const transfersTo = async (to: `0x${string}`, token = USDC as 'USDC.s' | 'USDT.s') =>
    devnet.context.client.getLogs({
      address: devnet.tokens[token],
      event: TRANSFER,
      args: { from: devnet.treasury.address, to },
      fromBlock: 0n,
    });

  test('behavior: 20 payouts at once for earnings that cover 3 pay exactly 3, on chain and in the ledger', async () => {
    const o = await owner(3n * USD + USD / 2n);
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => o.payout({ token: USDC, amount: '1' })),
    );
    const codes = answers.map((a) => a.statusCode).sort();
    expect(codes.filter((c) => c === 200)).toHaveLength(3);
    expect(codes.filter((c) => c === 402)).toHaveLength(17);
    for (const a of answers.filter((x) => x.statusCode === 402)) {
      expect(a.json()).toMatchObject({ error: { code: 'insufficient_earnings' } });
    }
    expect(await tokenBalance(devnet, USDC, o.address)).toBe(parseUnits('3', 6));
    expect(await transfersTo(o.address)).toHaveLength(3);
    expect(await o.earnings()).toBe(USD / 2n);
    const list = await t.app.inject({
      method: 'GET',
      url: '/api/provider/payouts',
      headers: { authorization: `Bearer ${o.jwt}` },
    });
    expect((list.json() as { payouts: { status: string }[] }).payouts.map((p) => p.status)).toEqual([
      'paid',
      'paid',
      'paid',
    ]);
  }, 60_000);

  test('behavior: a retry with the same Idempotency-Key answers the first payout and pays nothing again', async () => {
    const o = await owner(2n * USD);
    const key = randomUUID();
    const [a, b] = await Promise.all([
      o.payout({ token: USDC, amount: '0.5' }, key),
      o.payout({ token: USDC, amount: '0.5' }, key),
    ]);
    const c = await o.payout({ token: USDC, amount: '0.5' }, key);
    const ids = [a, b, c].map((r) => (r.json() as { id: string }).id);
    expect(new Set(ids).size).toBe(1);
    expect(await transfersTo(o.address)).toHaveLength(1);
    expect(await o.earnings()).toBe(2n * USD - USD / 2n);
    // The same key for something else is a conflict, not a second payout.
    const other = await o.payout({ token: USDC, amount: '0.7' }, key);
    expect(other.statusCode).toBe(409);
    expect(other.json()).toMatchObject({ error: { code: 'idempotency_conflict' } });
  }, 60_000);

  test('behavior: the whole balance pays out by default, to the unit; the minimum, the cap and bad input are refused', async () => {
    const o = await owner(1_234_567n); // 0.001234567 USD: 1,234 units of USDC.s, 567 nanousd stay
    const all = await o.payout({ token: USDC });
    expect(all.statusCode).toBe(200);
    expect(all.json()).toMatchObject({ status: 'paid', token: USDC, amount: '0.001234' });
    expect(await tokenBalance(devnet, USDC, o.address)).toBe(1_234n);
    expect(await o.earnings()).toBe(567n);
    const dust = await o.payout({ token: USDC });
    expect(dust.statusCode).toBe(400);
    expect(dust.json()).toMatchObject({ error: { code: 'payout_below_minimum' } });

    const rich = await owner(150n * USD);
    const over = await rich.payout({ token: USDC, amount: '101' });
    expect(over.statusCode).toBe(429);
    expect(over.json()).toMatchObject({ error: { code: 'payout_limit_exceeded' } });
    expect((await rich.payout({ token: USDC, amount: '60' })).statusCode).toBe(200);
    expect((await rich.payout({ token: USDC, amount: '41' })).statusCode).toBe(429);
    expect(await rich.earnings()).toBe(90n * USD);

    for (const body of [
      { token: 'DOGE' },
      { token: USDC, amount: '-1' },
      { token: USDC, amount: '1e3' },
      { token: USDC, to: 'nope' },
      { token: USDC, extra: 1 },
    ]) {
      const res = await rich.payout(body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
    }
    // Into a wallet this service manages (here: the treasury itself) is refused.
    const managed = await rich.payout({ token: USDC, amount: '1', to: devnet.treasury.address });
    expect(managed.json()).toMatchObject({ error: { code: 'recipient_not_allowed' } });
    expect(await rich.earnings()).toBe(90n * USD);
  }, 60_000);

  test('behavior: a treasury that cannot pay answers 503 treasury_unavailable and the earnings stay', async () => {
    const o = await owner(5n * USD);
    // Drain the treasury's USDT.s (an operator moving it away): the coordinator finds it empty.
    const services = createChainServices(t.config)!;
    const held = await tokenBalance(devnet, 'USDT.s', devnet.treasury.address);
    await sendTransaction(services.context, {
      account: devnet.treasury.account,
      to: devnet.tokens['USDT.s'],
      data: encodeFunctionData({
        abi: erc20Abi,
        functionName: 'transfer',
        args: [devnet.funder.address, held],
      }),
      gas: STABLE_TRANSFER_GAS,
    });
    const res = await o.payout({ token: 'USDT.s', amount: '1' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ error: { code: 'treasury_unavailable' } });
    expect(await o.earnings()).toBe(5n * USD);
    // Over the earnings is 402 whatever the treasury holds: the answer tells nothing about it.
    const over = await o.payout({ token: 'USDT.s', amount: '6' });
    expect(over.statusCode).toBe(402);
    expect(over.json()).toMatchObject({ error: { code: 'insufficient_earnings', param: 'amount' } });
    expect(await o.earnings()).toBe(5n * USD);
    // Refill for the other backend's run.
    await devnet.fund(devnet.treasury.address, { stables: { 'USDT.s': held } });
  }, 60_000);

  test('error: the zero address is refused with 400 and nothing is sent', async () => {
    const o = await owner(2n * USD);
    const zero = '0x0000000000000000000000000000000000000000';
    const before = await devnet.context.client.getTransactionCount({
      address: devnet.treasury.address,
      blockTag: 'pending',
    });
    const res = await o.payout({ token: USDC, amount: '1', to: zero });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: { code: 'invalid_request', param: 'to' } });
    expect(await o.earnings()).toBe(2n * USD);
    expect(
      await devnet.context.client.getTransactionCount({
        address: devnet.treasury.address,
        blockTag: 'pending',
      }),
    ).toBe(before);
    const rows = await t.db
      .selectFrom('provider_payouts')
      .select('id')
      .where('to_address', '=', zero)
      .execute();
    expect(rows).toEqual([]);
  }, 60_000);

  test('behavior: the treasury check counts payouts broadcast but not mined', async () => {
    const o = await owner(5n * USD);
    const services = createChainServices(t.config)!;
    const { client } = devnet.context;
    // Leave the treasury 1.5 USDT.s: one payout of 1 fits, a second does not while the first is in flight.
    const held = await tokenBalance(devnet, 'USDT.s', devnet.treasury.address);
    const away = held - parseUnits('1.5', 6);
    await sendTransaction(services.context, {
      account: devnet.treasury.account,
      to: devnet.tokens['USDT.s'],
      data: encodeFunctionData({
        abi: erc20Abi,
        functionName: 'transfer',
        args: [devnet.funder.address, away],
      }),
      gas: STABLE_TRANSFER_GAS,
    });
    await client.request({ method: 'evm_setIntervalMining' as never, params: [0] as never });
    try {
      const first = o.payout({ token: 'USDT.s', amount: '1' });
      await until(async () => {
        const row = await t.db
          .selectFrom('provider_payouts')
          .select('status')
          .where('owner', '=', o.address.toLowerCase())
          .executeTakeFirst();
        return row?.status === 'sent';
      }, 10_000);
      // On chain the treasury still holds 1.5; 1 of it is on its way out.
      expect(await tokenBalance(devnet, 'USDT.s', devnet.treasury.address)).toBe(parseUnits('1.5', 6));
      const second = await o.payout({ token: 'USDT.s', amount: '1' });
      expect(second.statusCode).toBe(503);
      expect(second.json()).toMatchObject({ error: { code: 'treasury_unavailable' } });
      await client.request({ method: 'evm_setIntervalMining' as never, params: [1] as never });
      expect((await first).statusCode).toBe(200);
      expect(await o.earnings()).toBe(4n * USD);
    } finally {
      await client.request({ method: 'evm_setIntervalMining' as never, params: [1] as never });
      await devnet.fund(devnet.treasury.address, { stables: { 'USDT.s': away + parseUnits('1', 6) } });
    }
  }, 60_000);

  test('behavior: open payouts left by a crash are settled from the chain — rebroadcast once, or given back', async () => {
    const o = await owner(2n * USD);
    const { client } = devnet.context;
    const treasury = devnet.treasury.account;
    /** A payout as a crash leaves it: debited, signed with `nonce`, never broadcast. */
    const crashed = async (nonce: number) => {
      const id = randomUUID();
      const now = Date.now() - 1_000;
      const units = parseUnits('0.25', 6);
      const raw = await treasury.signTransaction({
        type: 'legacy',
        chainId: 800_000,
        nonce,
        gas: STABLE_TRANSFER_GAS,
        gasPrice: GAS_PRICE_WEI,
        to: devnet.tokens[USDC],
        data: encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [o.address, units] }),
      });
      const { keccak256 } = await import('viem');
      await t.db.transaction().execute(async (trx) => {
        await trx
          .insertInto('provider_payouts')
          .values({
            id,
            owner: o.address.toLowerCase(),
            idempotency_key: null,
            token: USDC,
            amount: units.toString(),
            usd_nano: USD / 4n,
            to_address: o.address,
            status: 'signed',
            tx_hash: keccak256(raw),
            raw_tx: raw,
            error_code: null,
            created_at: now,
            updated_at: now,
          })
          .execute();
        await applyEntry(trx, {
          accountId: providerAccountId(o.address),
          kind: ENTRY_KINDS.payout,
          amount: -(USD / 4n),
          ref: id,
          now,
        });
      });
      return id;
    };
    const services = createChainServices(t.config)!;
    const settle = () =>
      settlePayouts({ store: t.app.ctx.store, services }, { now: Date.now(), settleAfterMs: 100 });
    const status = async (id: string) =>
      (
        await t.db
          .selectFrom('provider_payouts')
          .select('status')
          .where('id', '=', id)
          .executeTakeFirstOrThrow()
      ).status;

    // Signed at the next nonce, never sent: the same bytes go out once, and it is paid.
    const pending = await client.getTransactionCount({ address: treasury.address, blockTag: 'pending' });
    const resent = await crashed(pending);
    await settle();
    await new Promise((r) => setTimeout(r, 1_500));
    await settle();
    expect(await status(resent)).toBe('paid');
    expect(await tokenBalance(devnet, USDC, o.address)).toBe(parseUnits('0.25', 6));

    // Signed at a nonce another transaction then took: it can never be mined; the earnings return.
    const taken = await crashed(
      await client.getTransactionCount({ address: treasury.address, blockTag: 'pending' }),
    );
    await sendTransaction(services.context, { account: treasury, to: devnet.funder.address, value: 1n });
    await settle();
    expect(await status(taken)).toBe('failed');
    expect(await o.earnings()).toBe(2n * USD - USD / 4n);
    expect(await tokenBalance(devnet, USDC, o.address)).toBe(parseUnits('0.25', 6));
  }, 60_000);
});
