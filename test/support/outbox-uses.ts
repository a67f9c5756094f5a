/**
 * The uses of the transfer outbox as its crash-injection suite (test/transfer-outbox-crash.test.ts)
 * drives them: for each, how to start one send the way the coordinator does, through a given
 * outbox, and what must hold once its transfer was mined. Not for production code.
 */
import { randomUUID } from 'node:crypto';
import { type Address, parseEther, parseUnits } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { expect } from 'vitest';
import type { ChainServices } from '../../coordinator/src/chain/create-chain-services.js';
import type { TransferOutbox } from '../../coordinator/src/chain/transfer-outbox.js';
import type { OutboxLog, TransferRow } from '../../coordinator/src/chain/transfer-types.js';
import { ENTRY_KINDS, providerAccountId } from '../../coordinator/src/db/tables/ledger.js';
import { applyEntry } from '../../coordinator/src/ledger/apply-entry.js';
import { requestPayout } from '../../coordinator/src/provider/payout.js';
import { PAYOUT_PURPOSE, payoutTransfers } from '../../coordinator/src/provider/payout-transfers.js';
import { signIn, type TestApp, type TestClock } from '../../coordinator/src/testing/index.js';
import { withdraw } from '../../coordinator/src/withdraw/withdraw.js';
import { WITHDRAW_PURPOSE, withdrawTransfers } from '../../coordinator/src/withdraw/withdraw-transfers.js';
import { advanceChainTime, type Devnet, proxyAddressOf, tokenBalance } from '../chain-fixture.js';
import { poolOutboxUses } from './pool-outbox-uses.js';

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

/** The users the uses need, made on a running app: a staker, a releaser, a withdrawer. */
export type OutboxUsers = {
  stakerUser: { id: string; address: string; proxy: Address };
  /** Unbondings that come due 100 s of chain time apart (RELEASER_UNBONDINGS of 0.5 TOK). */
  releaser: { id: string; address: string; proxy: Address };
  withdrawer: { id: string; proxy: Address };
};

/** How many unbondings the releaser opens (each release case, and the replaced case, takes one). */
export const RELEASER_UNBONDINGS = 10;

/** Signs the users in and funds them: a staker of 100 TOK, a releaser, a withdrawer. */
export async function createOutboxUsers(t: TestApp, devnet: Devnet): Promise<OutboxUsers> {
  const tx = (jwt: string, method: string, params: unknown[]) =>
    t.app.inject({
      method: 'POST',
      url: '/tx',
      headers: { authorization: `Bearer ${jwt}` },
      payload: { method, params },
    });
  const newUser = async (nativeWei: bigint) => {
    const account = privateKeyToAccount(generatePrivateKey());
    const jwt = await signIn(t.app, account);
    const row = await t.db
      .selectFrom('users')
      .select(['id', 'address'])
      .where('address', '=', account.address)
      .executeTakeFirstOrThrow();
    const proxy = await proxyAddressOf(t.app, jwt);
    await devnet.fund(proxy, { nativeWei });
    return { ...row, proxy, jwt };
  };
  // A staker to stake, unbond, slash and claim for: 100 TOK staked through /tx.
  const { jwt: stakerJwt, ...stakerUser } = await newUser(parseEther('150'));
  expect((await tx(stakerJwt, 'chain_stake', [stakerUser.address, '100.0000 TOK'])).statusCode).toBe(200);
  // A releaser whose unbondings come due one at a time.
  const { jwt: releaserJwt, ...releaser } = await newUser(parseEther('20'));
  expect((await tx(releaserJwt, 'chain_stake', [releaser.address, '10.0000 TOK'])).statusCode).toBe(200);
  for (let i = 0; i < RELEASER_UNBONDINGS; i++) {
    expect((await tx(releaserJwt, 'chain_unstake', [releaser.address, '0.5000 TOK'])).statusCode).toBe(200);
    await advanceChainTime(devnet, 100);
  }
  // A user with native token in the proxy wallet that backs no credit: all of it may leave.
  const { jwt: _withdrawJwt, address: _address, ...withdrawer } = await newUser(parseEther('10'));
  return { stakerUser, releaser, withdrawer };
}

/** The uses of the outbox, in the order the suite runs them (the staking pool's in pool-outbox-uses.ts). */
export function outboxUses({
  t,
  devnet,
  clock,
  log,
  users,
}: {
  t: TestApp;
  devnet: Devnet;
  clock: TestClock;
  log: OutboxLog;
  users: OutboxUsers;
}): OutboxUse[] {
  const { withdrawer } = users;
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
    ...poolOutboxUses({ t, devnet, clock, log, users }),
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
