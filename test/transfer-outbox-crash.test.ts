/**
 * The transfer outbox's crash-injection suite, on a real anvil, on SQLite and PostgreSQL: for each
 * use moved onto the outbox, a send is interrupted at every step — after the claim, after the
 * signed bytes are stored, after the broadcast, before the end is recorded (receipt in hand) — in
 * two ways: `kill` (the step never returns: a process that died there, its claim left behind) and
 * `throw` (an error at that step). A second process's outbox (a new claim token, a new signer
 * queue) then sweeps, after the dead claim went stale. Each time: exactly one transaction left
 * the sending wallet (its nonce moved by one), a transfer found signed is sent from its stored
 * bytes (the same hash), never signed again, the use's row ended as mined says, every throw was
 * logged, and at the end the books balance (Σ entries = balances, the chain agrees).
 */
import { randomUUID } from 'node:crypto';
import { type Address, parseEther, parseUnits } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, expect, test } from 'vitest';
import {
  CHAIN_ID,
  GAS_PRICE_WEI,
  NATIVE_TRANSFER_FEE_WEI,
  NATIVE_TRANSFER_GAS,
} from '../coordinator/src/chain/constants.js';
import { type ChainServices, createChainServices } from '../coordinator/src/chain/create-chain-services.js';
import {
  DEFAULT_STALE_CLAIM_MS,
  type OutboxLog,
  TRANSFER_STEPS,
  TransferOutbox,
  type TransferRow,
  type TransferStep,
} from '../coordinator/src/chain/transfer-outbox.js';
import { applyEntry } from '../coordinator/src/ledger/apply-entry.js';
import { ENTRY_KINDS, providerAccountId } from '../coordinator/src/ledger/tables.js';
import { requestPayout } from '../coordinator/src/provider/payout.js';
import { PAYOUT_PURPOSE, payoutTransfers } from '../coordinator/src/provider/payout-transfers.js';
import { claim } from '../coordinator/src/staking/claim.js';
import { CLAIM_PURPOSE, claimTransfers } from '../coordinator/src/staking/claim-transfers.js';
import { RELEASE_PURPOSE, releaseTransfers } from '../coordinator/src/staking/release-transfers.js';
import { recoverStrandedReleases, releaseUnbonded } from '../coordinator/src/staking/release-unbonded.js';
import { executeSlashes } from '../coordinator/src/staking/slash.js';
import { SLASH_PURPOSE, slashTransfers } from '../coordinator/src/staking/slash-transfers.js';
import {
  createTestApp,
  createTestClock,
  describeBackends,
  expectBooksBalanced,
  signIn,
  type TestApp,
  until,
} from '../coordinator/src/testing/index.js';
import { withdraw } from '../coordinator/src/withdraw/withdraw.js';
import { WITHDRAW_PURPOSE, withdrawTransfers } from '../coordinator/src/withdraw/withdraw-transfers.js';
import { chainOverrides, type Devnet, proxyAddressOf, startDevnet, tokenBalance } from './chain-fixture.js';

const USD = 1_000_000_000n;
const MODES = ['kill', 'throw'] as const;

let devnet: Devnet;
beforeAll(async () => {
  devnet = await startDevnet();
}, 60_000);
afterAll(async () => devnet?.stop());

/** One use of the outbox, as the crash suite drives it. */
type Use = {
  name: string;
  purpose: string;
  /** The wallet that signs this use's transfers. */
  sender(): Address;
  register(outbox: TransferOutbox, services: ChainServices): TransferOutbox;
  /**
   * Starts one send the way the use does (through `outbox`, whose process may die: not awaited) and
   * returns what must hold once its transfer ended mined.
   */
  start(
    outbox: TransferOutbox,
    services: ChainServices,
  ): Promise<{ run: Promise<unknown>; check(transfer: TransferRow): Promise<void> }>;
};

describeBackends('transfer outbox crash suite', (backend) => {
  let t: TestApp;
  const clock = createTestClock();
  const logged: { level: 'warn' | 'error'; message: string }[] = [];
  const log: OutboxLog = {
    warn: (_o, message) => logged.push({ level: 'warn', message }),
    error: (_o, message) => logged.push({ level: 'error', message }),
  };
  let releaseUser: { id: string; proxy: Address };
  let staker: Address;
  let stakerUser: { id: string; address: string; proxy: Address };
  let withdrawer: { id: string; proxy: Address };

  beforeAll(async () => {
    // The app's own timers are slow here: the suite's outboxes are the only processes that send.
    t = await createTestApp(backend, {
      label: 'outbox',
      overrides: {
        ...chainOverrides(devnet, { staking: { releaseIntervalMs: 3_600_000 } }),
        payouts: { minNano: 1_000n, dailyCapNano: 1_000n * USD, settleAfterMs: 3_600_000 },
      },
    });
    const account = privateKeyToAccount(generatePrivateKey());
    const jwt = await signIn(t.app, account);
    const user = await t.db
      .selectFrom('users')
      .select('id')
      .where('address', '=', account.address)
      .executeTakeFirstOrThrow();
    releaseUser = { id: user.id, proxy: await proxyAddressOf(t.app, jwt) };
    // A staker to slash: 100 TOK staked through /tx.
    const stakerAccount = privateKeyToAccount(generatePrivateKey());
    const stakerJwt = await signIn(t.app, stakerAccount);
    await devnet.fund(await proxyAddressOf(t.app, stakerJwt), { nativeWei: parseEther('101') });
    const staked = await t.app.inject({
      method: 'POST',
      url: '/tx',
      headers: { authorization: `Bearer ${stakerJwt}` },
      payload: { method: 'chain_stake', params: [stakerAccount.address, '100.0000 TOK'] },
    });
    expect(staked.statusCode).toBe(200);
    staker = stakerAccount.address;
    const stakerRow = await t.db
      .selectFrom('users')
      .select(['id', 'address'])
      .where('address', '=', staker)
      .executeTakeFirstOrThrow();
    stakerUser = { ...stakerRow, proxy: await proxyAddressOf(t.app, stakerJwt) };
    // A user with native token in the proxy wallet that backs no credit: all of it may leave.
    const withdrawAccount = privateKeyToAccount(generatePrivateKey());
    const withdrawJwt = await signIn(t.app, withdrawAccount);
    const withdrawRow = await t.db
      .selectFrom('users')
      .select('id')
      .where('address', '=', withdrawAccount.address)
      .executeTakeFirstOrThrow();
    withdrawer = { id: withdrawRow.id, proxy: await proxyAddressOf(t.app, withdrawJwt) };
    await devnet.fund(withdrawer.proxy, { nativeWei: parseEther('10') });
  }, 60_000);

  afterAll(async () => {
    if (t) await expectBooksBalanced(t.app.ctx, t.config);
    await t?.close();
  });

  const uses: Use[] = [
    {
      name: 'payout',
      purpose: PAYOUT_PURPOSE,
      sender: () => devnet.treasury.address,
      register: (outbox, services) => outbox.register(PAYOUT_PURPOSE, payoutTransfers(services, clock)),
      async start(outbox, services) {
        const owner = privateKeyToAccount(generatePrivateKey()).address;
        await applyEntry(t.db, {
          accountId: providerAccountId(owner),
          kind: ENTRY_KINDS.adjustment,
          amount: USD,
          ref: `seed-${randomUUID()}`,
          now: Date.now(),
        });
        const run = requestPayout(
          {
            store: t.app.ctx.store,
            services,
            clock,
            limits: { minNano: 1_000n, dailyCapNano: 1_000n * USD },
            outbox,
          },
          { owner, token: 'USDC.s', amount: '0.25' },
        );
        return {
          run,
          async check(transfer) {
            const payout = await t.db
              .selectFrom('provider_payouts')
              .selectAll()
              .where('id', '=', transfer.ref)
              .executeTakeFirstOrThrow();
            expect(payout).toMatchObject({ status: 'paid', tx_hash: transfer.tx_hash });
            expect(await tokenBalance(devnet, 'USDC.s', owner)).toBe(parseUnits('0.25', 6));
            expect((await t.ledger.balance(providerAccountId(owner))).balanceNano).toBe(USD - USD / 4n);
          },
        };
      },
    },
    {
      name: 'release',
      purpose: RELEASE_PURPOSE,
      sender: () => devnet.vaults.staking.address,
      register: (outbox, services) => outbox.register(RELEASE_PURPOSE, releaseTransfers(services, clock)),
      async start(outbox, services) {
        const id = randomUUID();
        const amount = parseEther('0.01');
        await t.db
          .insertInto('unbondings')
          .values({
            id,
            user_id: releaseUser.id,
            amount_wei: amount.toString(),
            release_at: clock.now() - 1,
            status: 'unbonding',
            tx_hash: null,
            created_at: clock.now(),
          })
          .execute();
        const before = await devnet.context.client.getBalance({ address: releaseUser.proxy });
        const run = releaseUnbonded({ db: t.db, services, clock, outbox, log }, { userId: releaseUser.id });
        return {
          run,
          async check(transfer) {
            expect(transfer.ref).toBe(id);
            const row = await t.db
              .selectFrom('unbondings')
              .selectAll()
              .where('id', '=', id)
              .executeTakeFirstOrThrow();
            expect(row).toMatchObject({ status: 'released', tx_hash: transfer.tx_hash });
            const events = await t.db
              .selectFrom('stake_events')
              .select('tx_hash')
              .where('kind', '=', 'release')
              .where('tx_hash', '=', transfer.tx_hash)
              .execute();
            expect(events).toHaveLength(1);
            expect(await devnet.context.client.getBalance({ address: releaseUser.proxy })).toBe(
              before + amount,
            );
          },
        };
      },
    },
    {
      name: 'slash',
      purpose: SLASH_PURPOSE,
      sender: () => devnet.vaults.staking.address,
      register: (outbox, services) => outbox.register(SLASH_PURPOSE, slashTransfers(services, clock)),
      async start(outbox, services) {
        const id = randomUUID();
        await t.db
          .insertInto('slashes')
          .values({
            id,
            node_id: '0x'.padEnd(42, '7'),
            owner: staker.toLowerCase(),
            fraction_bps: 100,
            evidence: JSON.stringify({ verifications: [{ jobId: `job-${id}` }] }),
            status: 'pending',
            amount_wei: null,
            stake_event_id: null,
            tx_hash: null,
            raw_tx: null,
            created_at: clock.now(),
            updated_at: clock.now(),
          })
          .execute();
        const rewards = devnet.vaults.rewards.address;
        const before = await devnet.context.client.getBalance({ address: rewards });
        const run = executeSlashes({ db: t.db, services, clock, outbox, log });
        return {
          run,
          async check(transfer) {
            expect(transfer.ref).toBe(id);
            const row = await t.db
              .selectFrom('slashes')
              .selectAll()
              .where('id', '=', id)
              .executeTakeFirstOrThrow();
            expect(row).toMatchObject({ status: 'sent', tx_hash: transfer.tx_hash, raw_tx: null });
            const event = await t.db
              .selectFrom('stake_events')
              .selectAll()
              .where('id', '=', row.stake_event_id!)
              .executeTakeFirstOrThrow();
            expect(event).toMatchObject({
              kind: 'slash',
              tx_hash: transfer.tx_hash,
              amount_wei: row.amount_wei,
            });
            expect(await devnet.context.client.getBalance({ address: rewards })).toBe(
              before + BigInt(row.amount_wei!) - NATIVE_TRANSFER_FEE_WEI,
            );
          },
        };
      },
    },
    {
      name: 'claim',
      purpose: CLAIM_PURPOSE,
      sender: () => devnet.vaults.rewards.address,
      register: (outbox, services) => outbox.register(CLAIM_PURPOSE, claimTransfers(services, clock)),
      async start(outbox, services) {
        clock.advance(86_400_000); // a day of rewards to claim
        const before = await devnet.context.client.getBalance({ address: stakerUser.proxy });
        const run = claim(
          { db: t.db, services, clock, keyring: t.app.ctx.keyring, outbox },
          { user: { id: stakerUser.id, address: stakerUser.address } },
        );
        return {
          run,
          async check(transfer) {
            const payout = await t.db
              .selectFrom('reward_payouts')
              .selectAll()
              .where('id', '=', transfer.ref)
              .executeTakeFirstOrThrow();
            expect(payout).toMatchObject({
              status: 'paid',
              tx_hash: transfer.tx_hash,
              amount_wei: transfer.amount,
            });
            const events = await t.db
              .selectFrom('stake_events')
              .select('amount_wei')
              .where('kind', '=', 'claim')
              .where('tx_hash', '=', transfer.tx_hash)
              .execute();
            expect(events).toEqual([{ amount_wei: transfer.amount }]);
            expect(await devnet.context.client.getBalance({ address: stakerUser.proxy })).toBe(
              before + BigInt(transfer.amount),
            );
          },
        };
      },
    },
    {
      name: 'withdraw',
      purpose: WITHDRAW_PURPOSE,
      sender: () => withdrawer.proxy,
      register: (outbox, services) =>
        outbox.register(
          WITHDRAW_PURPOSE,
          withdrawTransfers({ db: t.db, services, keyring: t.app.ctx.keyring }),
        ),
      async start(outbox, services) {
        const to = privateKeyToAccount(generatePrivateKey()).address;
        const run = withdraw(
          { db: t.db, services, clock, outbox },
          { user: { id: withdrawer.id }, to, token: 'native', amount: '0.01' },
        );
        return {
          run,
          async check(transfer) {
            const row = await t.db
              .selectFrom('withdrawals')
              .selectAll()
              .where('id', '=', transfer.ref)
              .executeTakeFirstOrThrow();
            expect(row).toMatchObject({ status: 'sent', tx_hash: transfer.tx_hash, to_address: to });
            expect(await devnet.context.client.getBalance({ address: to })).toBe(parseEther('0.01'));
          },
        };
      },
    },
  ];

  for (const use of uses) {
    for (const step of TRANSFER_STEPS) {
      for (const mode of MODES) {
        test(`behavior: ${use.name} — ${mode} at ${step}: sent once, from the stored bytes, and settled`, async () => {
          const nonceBefore = await devnet.context.client.getTransactionCount({
            address: use.sender(),
            blockTag: 'pending',
          });
          logged.length = 0;
          let crashed: TransferRow | undefined;
          let reached!: () => void;
          const atStep = new Promise<void>((resolve) => {
            reached = resolve;
          });
          const onStep = (at: TransferStep, transfer: TransferRow) => {
            if (at !== step || crashed) return;
            crashed = transfer;
            reached();
            if (mode === 'kill') return new Promise<void>(() => {}); // this process is gone
            throw new Error(`injected failure at ${step}`);
          };
          const first = createChainServices(t.config)!;
          const dying = use.register(
            new TransferOutbox({ db: t.db, context: first.context, clock, log, onStep }),
            first,
          );
          const { run, check } = await use.start(dying, first);
          void run.catch(() => {});
          await atStep;
          if (mode === 'throw') {
            await run.catch(() => {});
            expect(logged.some((l) => l.level === 'error' && l.message.includes('step failed'))).toBe(true);
          }

          // The restart: another process, after the dead one's claim went stale.
          clock.advance(DEFAULT_STALE_CLAIM_MS + 1);
          const second = createChainServices(t.config)!;
          const survivor = use.register(
            new TransferOutbox({ db: t.db, context: second.context, clock, log }),
            second,
          );
          const id = crashed!.id;
          let transfer: TransferRow | undefined;
          await until(
            async () => {
              await survivor.sweep();
              transfer = await survivor.find(id);
              return transfer?.status === 'mined';
            },
            20_000,
            200,
          );
          // Signed before the crash: the very same transaction was mined, never a new signature.
          if (crashed!.tx_hash) expect(transfer!.tx_hash).toBe(crashed!.tx_hash);
          expect(transfer!.raw_tx).toMatch(/^0x/);
          const nonceAfter = await devnet.context.client.getTransactionCount({
            address: use.sender(),
            blockTag: 'pending',
          });
          expect(nonceAfter - nonceBefore).toBe(1);
          const all = await t.db
            .selectFrom('chain_transfers')
            .select('status')
            .where('purpose', '=', use.purpose)
            .where('ref', '=', transfer!.ref)
            .execute();
          expect(all.map((r) => r.status)).toEqual(['mined']);
          await check(transfer!);
        }, 60_000);
      }
    }
  }

  test('behavior: release — a transfer whose nonce another took ends replaced; the row goes back to unbonding and the next pass releases it', async () => {
    const id = randomUUID();
    const amount = parseEther('0.02');
    await t.db
      .insertInto('unbondings')
      .values({
        id,
        user_id: releaseUser.id,
        amount_wei: amount.toString(),
        release_at: clock.now() - 1,
        status: 'unbonding',
        tx_hash: null,
        created_at: clock.now(),
      })
      .execute();
    // A process dies right after storing the signed bytes…
    const first = createChainServices(t.config)!;
    let stored!: () => void;
    const atStored = new Promise<void>((resolve) => {
      stored = resolve;
    });
    const dying = new TransferOutbox({
      db: t.db,
      context: first.context,
      clock,
      log,
      onStep: (step) => {
        if (step !== 'stored') return;
        stored();
        return new Promise<void>(() => {});
      },
    }).register(RELEASE_PURPOSE, releaseTransfers(first, clock));
    void releaseUnbonded(
      { db: t.db, services: first, clock, outbox: dying, log },
      { userId: releaseUser.id },
    );
    await atStored;
    // …and the vault's next transaction takes that nonce.
    const vault = devnet.vaults.staking.account;
    const hash = await devnet.context.client.sendRawTransaction({
      serializedTransaction: await vault.signTransaction({
        type: 'legacy',
        chainId: CHAIN_ID,
        nonce: await devnet.context.client.getTransactionCount({
          address: vault.address,
          blockTag: 'pending',
        }),
        gas: NATIVE_TRANSFER_GAS,
        gasPrice: GAS_PRICE_WEI,
        to: devnet.funder.address,
        value: 1n,
      }),
    });
    await devnet.context.client.waitForTransactionReceipt({ hash });
    logged.length = 0;
    clock.advance(DEFAULT_STALE_CLAIM_MS + 1);
    const second = createChainServices(t.config)!;
    const survivor = new TransferOutbox({ db: t.db, context: second.context, clock, log }).register(
      RELEASE_PURPOSE,
      releaseTransfers(second, clock),
    );
    await survivor.sweep();
    const transfers = await t.db
      .selectFrom('chain_transfers')
      .select('status')
      .where('purpose', '=', RELEASE_PURPOSE)
      .where('ref', '=', id)
      .execute();
    expect(transfers.map((r) => r.status)).toEqual(['replaced']);
    expect(logged.some((l) => l.message.includes('replaced'))).toBe(true);
    const row = () =>
      t.db.selectFrom('unbondings').select('status').where('id', '=', id).executeTakeFirstOrThrow();
    expect((await row()).status).toBe('unbonding');
    const before = await devnet.context.client.getBalance({ address: releaseUser.proxy });
    expect(
      await releaseUnbonded(
        { db: t.db, services: second, clock, outbox: survivor, log },
        { userId: releaseUser.id },
      ),
    ).toBe(1);
    expect((await row()).status).toBe('released');
    expect(await devnet.context.client.getBalance({ address: releaseUser.proxy })).toBe(before + amount);
  }, 60_000);

  test('behavior: release — rows an earlier version left releasing without a broadcast go back to unbonding', async () => {
    const id = randomUUID();
    await t.db
      .insertInto('unbondings')
      .values({
        id,
        user_id: releaseUser.id,
        amount_wei: parseEther('0.01').toString(),
        release_at: clock.now() - 1,
        status: 'releasing',
        tx_hash: null,
        created_at: clock.now(),
      })
      .execute();
    const services = createChainServices(t.config)!;
    expect(await recoverStrandedReleases({ db: t.db, services, clock, log })).toBe(1);
    const row = await t.db
      .selectFrom('unbondings')
      .select('status')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(row.status).toBe('unbonding');
    const outbox = new TransferOutbox({ db: t.db, context: services.context, clock, log }).register(
      RELEASE_PURPOSE,
      releaseTransfers(services, clock),
    );
    expect(
      await releaseUnbonded({ db: t.db, services, clock, outbox, log }, { userId: releaseUser.id }),
    ).toBe(1);
  }, 60_000);
});
