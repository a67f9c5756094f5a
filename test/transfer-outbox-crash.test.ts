/**
 * The transfer outbox's crash-injection suite, on a real anvil, on SQLite and PostgreSQL: for each
 * use moved onto the outbox, a send is interrupted at every step — after the claim, after the
 * signed bytes are stored, after the broadcast, before the end is recorded (receipt in hand) — in
 * two ways: `kill` (the step never returns: a process that died there, its claim left behind) and
 * `throw` (an error at that step). A second process's outbox (a new claim token, a new signer
 * queue) then sweeps, after the dead claim went stale. Each time: exactly one transaction left
 * the sending wallet (its nonce moved by one), a transfer found signed is sent from its stored
 * bytes (the same hash), never signed again, the use's row ended as mined says, every throw was
 * logged, and at the end the books balance (Σ entries = balances, the chain — the staking pool's
 * positions too — agrees).
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { CHAIN_ID, GAS_PRICE_WEI, NATIVE_TRANSFER_GAS } from '../coordinator/src/chain/constants.js';
import { type ChainServices, createChainServices } from '../coordinator/src/chain/create-chain-services.js';
import { DEFAULT_STALE_CLAIM_MS, TransferOutbox } from '../coordinator/src/chain/transfer-outbox.js';
import {
  type OutboxLog,
  TRANSFER_STEPS,
  type TransferRow,
  type TransferStep,
} from '../coordinator/src/chain/transfer-types.js';
import { POOL_PURPOSES, registerPoolTransfers } from '../coordinator/src/staking/pool-transfers.js';
import { releaseUnbonded } from '../coordinator/src/staking/release-unbonded.js';
import {
  createTestApp,
  createTestClock,
  describeBackends,
  expectBooksBalanced,
  type TestApp,
  until,
} from '../coordinator/src/testing/index.js';
import { loadProxyAccount } from '../coordinator/src/wallets/load-proxy-account.js';
import { advanceChainTime, chainOverrides, type Devnet, startDevnet } from './chain-fixture.js';
import { createOutboxUsers, type OutboxUse, type OutboxUsers, outboxUses } from './support/outbox-uses.js';

const USD = 1_000_000_000n;
const MODES = ['kill', 'throw'] as const;
/** The uses moved onto the outbox (test/support/outbox-uses.ts). */
const USE_NAMES = ['payout', 'stake', 'unbond', 'release', 'slash', 'claim', 'withdraw'] as const;

let devnet: Devnet;
beforeAll(async () => {
  // Blocks every 0.1 s, not the spec chain's 0.5 s: each of the 84 cases waits for a block, and
  // what they check (one send, from the stored bytes) does not depend on the block time.
  devnet = await startDevnet({ blockTimeS: 0.1, stakingPool: { unbondingPeriodS: 3_600 } });
}, 60_000);
afterAll(async () => devnet?.stop());

describeBackends('transfer outbox crash suite', (backend) => {
  let t: TestApp;
  const clock = createTestClock();
  const logged: { level: 'warn' | 'error'; message: string }[] = [];
  const log: OutboxLog = {
    warn: (_o, message) => logged.push({ level: 'warn', message }),
    error: (_o, message) => logged.push({ level: 'error', message }),
  };
  let users: OutboxUsers;

  beforeAll(async () => {
    // The app's own timers are slow here: the suite's outboxes are the only processes that send.
    t = await createTestApp(backend, {
      label: 'outbox',
      overrides: {
        ...chainOverrides(devnet, { staking: { releaseIntervalMs: 3_600_000 } }),
        payouts: { minNano: 1_000n, dailyCapNano: 1_000n * USD, settleAfterMs: 3_600_000 },
      },
    });
    users = await createOutboxUsers(t, devnet);
  }, 60_000);

  afterAll(async () => {
    if (t) await expectBooksBalanced(t.app.ctx, t.config);
    await t?.close();
  });

  const uses = (): OutboxUse[] => outboxUses({ t, devnet, clock, log, users });

  for (const name of USE_NAMES) {
    for (const step of TRANSFER_STEPS) {
      for (const mode of MODES) {
        test(`behavior: ${name} — ${mode} at ${step}: sent once, from the stored bytes, and settled`, async () => {
          const use = uses().find((u) => u.name === name)!;
          const nonceBefore = await devnet.context.client.getTransactionCount({
            address: use.sender(),
            blockTag: 'pending',
          });
          // Transfers of this use from earlier cases (a pool use's ref is its owner, the same each case).
          const earlier = (
            await t.db.selectFrom('chain_transfers').select('id').where('purpose', '=', use.purpose).execute()
          ).map((r) => r.id);
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
            50,
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
            .select(['id', 'status'])
            .where('purpose', '=', use.purpose)
            .where('ref', '=', transfer!.ref)
            .execute();
          expect(all.filter((r) => !earlier.includes(r.id)).map((r) => r.status)).toEqual(['mined']);
          await check(transfer!);
        }, 60_000);
      }
    }
  }

  test('behavior: release — a withdraw whose nonce another took ends replaced; the unbonding waits again and the next pass withdraws it', async () => {
    const { releaser } = users;
    const next = await t.db
      .selectFrom('unbondings')
      .select(['id', 'amount_wei', 'release_at'])
      .where('user_id', '=', releaser.id)
      .where('status', '=', 'unbonding')
      .orderBy('release_at')
      .executeTakeFirstOrThrow();
    const now = (await devnet.context.client.getBlock({ blockTag: 'latest' })).timestamp;
    const due = BigInt(Number(next.release_at) / 1000);
    if (due > now) await advanceChainTime(devnet, Number(due - now));
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
    });
    const poolDeps = (services: ChainServices) => ({ db: t.db, services, keyring: t.app.ctx.keyring, clock });
    registerPoolTransfers(dying, poolDeps(first));
    void releaseUnbonded({ ...poolDeps(first), outbox: dying, log }, { userId: releaser.id });
    await atStored;
    expect((await row(next.id)).status).toBe('releasing');
    // …and the proxy wallet's next transaction takes that nonce.
    const wallet = await loadProxyAccount(t.db, t.app.ctx.keyring, releaser.id);
    const hash = await devnet.context.client.sendRawTransaction({
      serializedTransaction: await wallet.signTransaction({
        type: 'legacy',
        chainId: CHAIN_ID,
        nonce: await devnet.context.client.getTransactionCount({
          address: wallet.address,
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
    const survivor = new TransferOutbox({ db: t.db, context: second.context, clock, log });
    registerPoolTransfers(survivor, poolDeps(second));
    await survivor.sweep();
    const transfers = await t.db
      .selectFrom('chain_transfers')
      .select('status')
      .where('purpose', '=', POOL_PURPOSES.withdraw)
      .where('ref', '=', releaser.id)
      .where('status', '!=', 'mined')
      .execute();
    expect(transfers.map((r) => r.status)).toEqual(['replaced']);
    expect(logged.some((l) => l.message.includes('replaced'))).toBe(true);
    expect((await row(next.id)).status).toBe('unbonding');
    expect(
      await releaseUnbonded({ ...poolDeps(second), outbox: survivor, log }, { userId: releaser.id }),
    ).toBe(1);
    expect((await row(next.id)).status).toBe('released');
  }, 60_000);

  const row = (id: string) =>
    t.db.selectFrom('unbondings').select('status').where('id', '=', id).executeTakeFirstOrThrow();
});
