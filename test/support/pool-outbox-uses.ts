/**
 * The staking pool's uses of the transfer outbox as the crash-injection suite drives them
 * (test/transfer-outbox-crash.test.ts): stake, unbond and claim through the service's operations,
 * the unbonding withdraw through the release pass, a slash through the slash pass — each a call of
 * StakingPool.sol — and what must hold once its transfer was mined: the ledger's view took the
 * call's event in once. Not for production code.
 */
import { randomUUID } from 'node:crypto';
import { type Address, type Hex, parseEther, parseEventLogs } from 'viem';
import { expect } from 'vitest';
import { GAS_PRICE_WEI } from '../../coordinator/src/chain/constants.js';
import type { ChainServices } from '../../coordinator/src/chain/create-chain-services.js';
import { stakingPoolArtifact } from '../../coordinator/src/chain/staking-pool-artifact.js';
import type { TransferOutbox } from '../../coordinator/src/chain/transfer-outbox.js';
import type { OutboxLog } from '../../coordinator/src/chain/transfer-types.js';
import { claim } from '../../coordinator/src/staking/claim.js';
import { POOL_PURPOSES, registerPoolTransfers } from '../../coordinator/src/staking/pool-transfers.js';
import { releaseUnbonded } from '../../coordinator/src/staking/release-unbonded.js';
import { executeSlashes } from '../../coordinator/src/staking/slash.js';
import { stake } from '../../coordinator/src/staking/stake.js';
import { unstake } from '../../coordinator/src/staking/unstake.js';
import type { TestApp, TestClock } from '../../coordinator/src/testing/index.js';
import { advanceChainTime, type Devnet } from '../chain-fixture.js';
import type { OutboxUse, OutboxUsers } from './outbox-uses.js';

/** The pool's uses, in the order the suite runs them. */
export function poolOutboxUses({
  t,
  devnet,
  clock,
  log,
  users: { stakerUser, releaser },
}: {
  t: TestApp;
  devnet: Devnet;
  clock: TestClock;
  log: OutboxLog;
  users: OutboxUsers;
}): OutboxUse[] {
  const { client } = devnet.context;
  const register = (outbox: TransferOutbox, services: ChainServices) => {
    registerPoolTransfers(outbox, { db: t.db, services, keyring: t.app.ctx.keyring, clock });
    return outbox;
  };
  const deps = (outbox: TransferOutbox, services: ChainServices) => ({
    db: t.db,
    services,
    keyring: t.app.ctx.keyring,
    clock,
    outbox,
    log,
  });
  const gasPaid = async (hash: string) =>
    (await client.getTransactionReceipt({ hash: hash as Hex })).gasUsed * GAS_PRICE_WEI;
  /** The stake events the ledger wrote for a transaction. */
  const eventsOf = (hash: string | null) =>
    t.db.selectFrom('stake_events').select(['kind', 'amount_wei']).where('tx_hash', '=', hash).execute();
  const staker = { id: stakerUser.id, address: stakerUser.address };
  return [
    {
      name: 'stake',
      purpose: POOL_PURPOSES.stake,
      sender: () => stakerUser.proxy,
      register,
      async start(outbox, services) {
        const run = stake(deps(outbox, services), { user: staker, amountWei: parseEther('1') });
        return {
          run,
          async check(transfer) {
            expect(transfer).toMatchObject({
              to_address: devnet.stakingPool,
              value_wei: parseEther('1').toString(),
            });
            expect(await eventsOf(transfer.tx_hash)).toEqual([
              { kind: 'stake', amount_wei: parseEther('1').toString() },
            ]);
          },
        };
      },
    },
    {
      name: 'unbond',
      purpose: POOL_PURPOSES.unbond,
      sender: () => stakerUser.proxy,
      register,
      async start(outbox, services) {
        const run = unstake(deps(outbox, services), { user: staker, amountWei: parseEther('0.5') });
        return {
          run,
          async check(transfer) {
            expect(await eventsOf(transfer.tx_hash)).toEqual([
              { kind: 'unstake', amount_wei: parseEther('0.5').toString() },
            ]);
            const rows = await t.db
              .selectFrom('unbondings')
              .select(['status', 'amount_wei'])
              .where('id', 'like', `${transfer.tx_hash}:%`)
              .execute();
            expect(rows).toEqual([{ status: 'unbonding', amount_wei: parseEther('0.5').toString() }]);
          },
        };
      },
    },
    {
      name: 'release',
      purpose: POOL_PURPOSES.withdraw,
      sender: () => releaser.proxy,
      register,
      async start(outbox, services) {
        // The releaser's unbondings come due 100 s apart: move the chain to the next one's time.
        const next = await t.db
          .selectFrom('unbondings')
          .select(['id', 'amount_wei', 'release_at'])
          .where('user_id', '=', releaser.id)
          .where('status', '=', 'unbonding')
          .orderBy('release_at')
          .executeTakeFirstOrThrow();
        const now = (await client.getBlock({ blockTag: 'latest' })).timestamp;
        const due = BigInt(Number(next.release_at) / 1000);
        if (due > now) await advanceChainTime(devnet, Number(due - now));
        const before = await client.getBalance({ address: releaser.proxy });
        const run = releaseUnbonded(deps(outbox, services), { userId: releaser.id });
        return {
          run,
          async check(transfer) {
            const released = await t.db
              .selectFrom('unbondings')
              .select(['id', 'amount_wei'])
              .where('tx_hash', '=', transfer.tx_hash)
              .where('status', '=', 'released')
              .execute();
            expect(released.map((r) => r.id)).toEqual([next.id]);
            expect(await eventsOf(transfer.tx_hash)).toEqual([
              { kind: 'release', amount_wei: next.amount_wei },
            ]);
            expect(await client.getBalance({ address: releaser.proxy })).toBe(
              before + BigInt(next.amount_wei) - (await gasPaid(transfer.tx_hash!)),
            );
          },
        };
      },
    },
    {
      name: 'slash',
      purpose: POOL_PURPOSES.slash,
      sender: () => devnet.vaults.staking.address,
      register,
      async start(outbox, services) {
        const id = randomUUID();
        await t.db
          .insertInto('slashes')
          .values({
            id,
            node_id: '0x'.padEnd(42, '7'),
            owner: stakerUser.address.toLowerCase(),
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
        const run = executeSlashes(deps(outbox, services));
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
            expect(BigInt(row.amount_wei!)).toBeGreaterThan(0n);
            expect(await eventsOf(transfer.tx_hash)).toEqual([{ kind: 'slash', amount_wei: row.amount_wei }]);
          },
        };
      },
    },
    {
      name: 'claim',
      purpose: POOL_PURPOSES.claim,
      sender: () => stakerUser.proxy,
      register,
      async start(outbox, services) {
        await advanceChainTime(devnet, 86_400); // a day of rewards to claim
        const before = await client.getBalance({ address: stakerUser.proxy });
        const run = claim(deps(outbox, services), { user: staker });
        return {
          run,
          async check(transfer) {
            const receipt = await client.getTransactionReceipt({ hash: transfer.tx_hash as Hex });
            const [claimed] = parseEventLogs({
              abi: stakingPoolArtifact.abi,
              eventName: 'RewardsClaimed',
              logs: receipt.logs,
            });
            const amount = claimed!.args.amount;
            expect(amount).toBeGreaterThan(0n);
            expect(await eventsOf(transfer.tx_hash)).toEqual([
              { kind: 'claim', amount_wei: amount.toString() },
            ]);
            expect(await client.getBalance({ address: stakerUser.proxy as Address })).toBe(
              before + amount - receipt.gasUsed * GAS_PRICE_WEI,
            );
          },
        };
      },
    },
  ];
}
