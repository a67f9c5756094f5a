/**
 * The uses of the transfer outbox as its crash-injection suite (test/transfer-outbox-crash.test.ts)
 * drives them: for each, how to start one send the way the coordinator does, through a given
 * outbox, and what must hold once its transfer was mined. Not for production code.
 */
import { randomUUID } from 'node:crypto';
import { type Address, parseEther, parseUnits } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { expect } from 'vitest';
import { NATIVE_TRANSFER_FEE_WEI } from '../../coordinator/src/chain/constants.js';
import type { ChainServices } from '../../coordinator/src/chain/create-chain-services.js';
import type { TransferOutbox } from '../../coordinator/src/chain/transfer-outbox.js';
import type { OutboxLog, TransferRow } from '../../coordinator/src/chain/transfer-types.js';
import { ENTRY_KINDS, providerAccountId } from '../../coordinator/src/db/tables/ledger.js';
import { applyEntry } from '../../coordinator/src/ledger/apply-entry.js';
import { requestPayout } from '../../coordinator/src/provider/payout.js';
import { PAYOUT_PURPOSE, payoutTransfers } from '../../coordinator/src/provider/payout-transfers.js';
import { claim } from '../../coordinator/src/staking/claim.js';
import { CLAIM_PURPOSE, claimTransfers } from '../../coordinator/src/staking/claim-transfers.js';
import { RELEASE_PURPOSE, releaseTransfers } from '../../coordinator/src/staking/release-transfers.js';
import { releaseUnbonded } from '../../coordinator/src/staking/release-unbonded.js';
import { executeSlashes } from '../../coordinator/src/staking/slash.js';
import { SLASH_PURPOSE, slashTransfers } from '../../coordinator/src/staking/slash-transfers.js';
import { signIn, type TestApp, type TestClock } from '../../coordinator/src/testing/index.js';
import { withdraw } from '../../coordinator/src/withdraw/withdraw.js';
import { WITHDRAW_PURPOSE, withdrawTransfers } from '../../coordinator/src/withdraw/withdraw-transfers.js';
import { type Devnet, proxyAddressOf, tokenBalance } from '../chain-fixture.js';

const USD = 1_000_000_000n;

/** One use of the outbox, as the crash suite drives it. */
export type OutboxUse = {
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

/** The users the uses need, made on a running app: one to release to, a staker, a withdrawer. */
export type OutboxUsers = {
  releaseUser: { id: string; proxy: Address };
  staker: Address;
  stakerUser: { id: string; address: string; proxy: Address };
  withdrawer: { id: string; proxy: Address };
};

/** Signs the users in and funds them: a release target, a staker of 100 TOK, a withdrawer. */
export async function createOutboxUsers(t: TestApp, devnet: Devnet): Promise<OutboxUsers> {
  const account = privateKeyToAccount(generatePrivateKey());
  const jwt = await signIn(t.app, account);
  const user = await t.db
    .selectFrom('users')
    .select('id')
    .where('address', '=', account.address)
    .executeTakeFirstOrThrow();
  const releaseUser = { id: user.id, proxy: await proxyAddressOf(t.app, jwt) };
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
  const staker = stakerAccount.address;
  const stakerRow = await t.db
    .selectFrom('users')
    .select(['id', 'address'])
    .where('address', '=', staker)
    .executeTakeFirstOrThrow();
  const stakerUser = { ...stakerRow, proxy: await proxyAddressOf(t.app, stakerJwt) };
  // A user with native token in the proxy wallet that backs no credit: all of it may leave.
  const withdrawAccount = privateKeyToAccount(generatePrivateKey());
  const withdrawJwt = await signIn(t.app, withdrawAccount);
  const withdrawRow = await t.db
    .selectFrom('users')
    .select('id')
    .where('address', '=', withdrawAccount.address)
    .executeTakeFirstOrThrow();
  const withdrawer = { id: withdrawRow.id, proxy: await proxyAddressOf(t.app, withdrawJwt) };
  await devnet.fund(withdrawer.proxy, { nativeWei: parseEther('10') });
  return { releaseUser, staker, stakerUser, withdrawer };
}

/** The five uses, in the order they moved onto the outbox. */
export function outboxUses({
  t,
  devnet,
  clock,
  log,
  users: { releaseUser, staker, stakerUser, withdrawer },
}: {
  t: TestApp;
  devnet: Devnet;
  clock: TestClock;
  log: OutboxLog;
  users: OutboxUsers;
}): OutboxUse[] {
  return [
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
}
