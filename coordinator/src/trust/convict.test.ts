/**
 * Conviction reaches the money, on SQLite and PostgreSQL, with the real ledger (reserve, settle,
 * usage rows): each client gets back exactly what it paid for the node's jobs in the window and
 * nothing for jobs before it; the node's earnings go to the refunds and the pool; a replay, a
 * concurrent conviction or another ref refunds nothing twice; an unowned node, a window without
 * jobs, earnings already paid out (the platform fee, then the pool; nothing negative); the books
 * balance after each (reconcile). A verdict's suspension convicts; a reputation suspension does not.
 */
import { type Kysely, sql } from 'kysely';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { toBigInt } from '../db/bigint.js';
import { newId } from '../db/ids.js';
import type { Database } from '../db/schema.js';
import type { Store } from '../db/store.js';
import {
  ENTRY_KINDS,
  PLATFORM_ACCOUNT_ID,
  providerAccountId,
  REFUND_POOL_ACCOUNT_ID,
} from '../db/tables/ledger.js';
import { PAYOUT_STATUS } from '../db/tables/provider.js';
import { TRUST_STATUS } from '../db/tables/trust.js';
import { USAGE_STATUS } from '../db/tables/usage.js';
import { applyEntry } from '../ledger/apply-entry.js';
import { Ledger } from '../ledger/ledger.js';
import { linkNode } from '../provider/link-node.js';
import {
  createTestClock,
  describeBackends,
  expectBooksBalanced,
  type TestDatabase,
} from '../testing/index.js';
import { type ConvictParams, convict } from './convict.js';
import { failedCheck } from './judge.js';
import { recordVerification, suspendNode } from './trust-store.js';

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 0, 10);
const POLICY = { passesToTrust: 5, slashBps: 0 };
/** A check failed outright: half the evidence that convicts (two in a row do). */
const FAIL = failedCheck('no token ids', 32);

/** A fresh random address, lowercase (node ids and owners are addresses). */
const address = () => privateKeyToAccount(generatePrivateKey()).address.toLowerCase();

describeBackends('convict', (backend) => {
  let opened: TestDatabase;
  let store: Store;
  let db: Kysely<Database>;
  let ledger: Ledger;
  const clock = createTestClock(T0);

  beforeEach(async () => {
    opened = await backend.open('convict');
    ({ store, db } = opened);
    clock.set(T0);
    ledger = new Ledger(store, { clock });
  });
  afterEach(async () => {
    await ledger.close();
    await opened.close();
  });

  const balance = async (accountId: string) => (await ledger.balance(accountId)).balanceNano;

  /** Sum of every balance: a conviction only moves money, so this never changes. */
  async function total(): Promise<bigint> {
    await ledger.idle();
    const row = await db
      .selectFrom('ledger_accounts')
      .select(sql<string | number>`coalesce(sum(balance + reserved), 0)`.as('total'))
      .executeTakeFirstOrThrow();
    return toBigInt(row.total);
  }

  /** A client's top-up. */
  const fund = (userId: string, nano: bigint) =>
    ledger.credit({ userId, amountNano: nano, ref: `pay-${newId()}` });

  /** One paid job of `nodeId` for `userId` at `at`, billed the way the router bills it. */
  async function serve(j: {
    userId: string;
    nodeId: string;
    owner?: string;
    providerNano: bigint;
    feeNano: bigint;
    at: number;
  }) {
    clock.set(j.at);
    const hold = await ledger.reserve({ userId: j.userId, amountNano: j.providerNano + j.feeNano + 1_000n });
    if (!hold.ok) throw new Error('the test client cannot pay');
    const outcome = await ledger.settle({
      reservationId: hold.reservationId,
      providerNano: j.providerNano,
      feeNano: j.feeNano,
      providerAccountId: providerAccountId(j.owner ?? j.nodeId),
      usage: {
        requestId: `req-${newId()}`,
        userId: j.userId,
        keyId: null,
        model: 'acme/liar-7b',
        // As the node sends it (checksummed): the conviction finds it case-blind.
        nodeId: j.nodeId.toUpperCase().replace('0X', '0x'),
        kind: 'chat',
        promptTokens: 10,
        completionTokens: 20,
        status: USAGE_STATUS.completed,
        now: j.at,
      },
    });
    return outcome!.chargedNano;
  }

  const run = (params: ConvictParams) => db.transaction().execute((trx) => convict(trx, params));

  test('default: each client gets back what it paid in the window; the earnings go to refunds and the pool', async () => {
    const [node, owner, alice, bob] = [address(), address(), 'u-alice', 'u-bob'];
    await linkNode(store, { nodeId: node, owner, now: T0 });
    await fund(alice, 10_000_000n);
    await fund(bob, 10_000_000n);
    // Before the window: honest-looking work, kept by its client, its earnings still unpaid.
    await serve({ userId: alice, nodeId: node, owner, providerNano: 500_000n, feeNano: 25_000n, at: T0 });
    const since = T0 + HOUR;
    const alicePaid =
      (await serve({
        userId: alice,
        nodeId: node,
        owner,
        providerNano: 100_000n,
        feeNano: 5_000n,
        at: since,
      })) +
      (await serve({
        userId: alice,
        nodeId: node,
        owner,
        providerNano: 40_000n,
        feeNano: 2_000n,
        at: since + 1,
      }));
    const bobPaid = await serve({
      userId: bob,
      nodeId: node,
      owner,
      providerNano: 70_000n,
      feeNano: 3_500n,
      at: since + 2,
    });
    // Another owner's node serving alice in the window is not touched.
    const honest = address();
    await serve({ userId: alice, nodeId: honest, providerNano: 9_000n, feeNano: 450n, at: since + 3 });

    const before = {
      alice: await balance(alice),
      bob: await balance(bob),
      owner: await balance(providerAccountId(owner)),
      platform: await balance(PLATFORM_ACCOUNT_ID),
      honest: await balance(providerAccountId(honest)),
      total: await total(),
    };
    expect(before.owner).toBe(710_000n);
    const out = await run({
      nodeId: node,
      sinceMs: since,
      now: since + HOUR,
      reason: 'failed twice',
      ref: 'v-1',
    });

    expect(out).toMatchObject({
      applied: true,
      owner,
      jobs: 3,
      refundedJobs: 3,
      refundedNano: alicePaid + bobPaid,
      unrefundedNano: 0n,
      forfeitedNano: 710_000n,
      feeReturnedNano: 0n,
      fromPoolNano: 0n,
      frozenNano: 710_000n - alicePaid - bobPaid,
    });
    expect(await balance(alice)).toBe(before.alice + alicePaid);
    expect(await balance(bob)).toBe(before.bob + bobPaid);
    expect(await balance(providerAccountId(owner))).toBe(0n);
    expect(await balance(REFUND_POOL_ACCOUNT_ID)).toBe(710_000n - alicePaid - bobPaid);
    expect(await balance(PLATFORM_ACCOUNT_ID)).toBe(before.platform); // the forfeit covered the fees
    expect(await balance(providerAccountId(honest))).toBe(before.honest);
    expect(await total()).toBe(before.total);
    // One refund entry per job, crediting exactly its charge.
    const refunds = await db
      .selectFrom('ledger_entries')
      .select(['account_id', 'amount'])
      .where('kind', '=', ENTRY_KINDS.convictionRefund)
      .where('account_id', 'in', [alice, bob])
      .orderBy('amount')
      .execute();
    expect(refunds.map((r) => [r.account_id, toBigInt(r.amount)])).toEqual([
      [alice, 42_000n],
      [bob, 73_500n],
      [alice, 105_000n],
    ]);
    const audit = await db.selectFrom('trust_audit').selectAll().where('node_id', '=', node).execute();
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      id: 'convict:v-1',
      action: 'convict',
      actor: 'coordinator',
      reason: 'failed twice',
    });
    expect(JSON.parse(audit[0]!.details)).toMatchObject({
      refundedJobs: 3,
      refundedNano: `${alicePaid + bobPaid}`,
    });

    // Replayed, or convicted again under another ref: nothing moves.
    const entries = async () =>
      Number(
        (
          await db
            .selectFrom('ledger_entries')
            .select(sql<number>`count(*)`.as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const count = await entries();
    expect(
      await run({ nodeId: node, sinceMs: since, now: since + HOUR, reason: 'again', ref: 'v-1' }),
    ).toEqual({
      ...out,
      applied: false,
    });
    const other = await run({
      nodeId: node,
      sinceMs: T0 + 1,
      now: since + 2 * HOUR,
      reason: 'again',
      ref: 'v-2',
    });
    expect(other).toMatchObject({
      applied: true,
      jobs: 0,
      refundedNano: 0n,
      forfeitedNano: 0n,
      feeReturnedNano: 0n,
    });
    expect(await entries()).toBe(count);
    expect(await balance(alice)).toBe(before.alice + alicePaid);
    await expectBooksBalanced({ db, ledger });
  });

  test('behavior: convictions at once (the same ref twice, and another) refund each job once', async () => {
    const [node, alice] = [address(), 'u-alice'];
    await fund(alice, 10_000_000n);
    let paid = 0n;
    for (let i = 0; i < 5; i++) {
      paid += await serve({
        userId: alice,
        nodeId: node,
        providerNano: 10_000n * BigInt(i + 1),
        feeNano: 500n,
        at: T0 + i,
      });
    }
    const before = { alice: await balance(alice), total: await total() };
    const results = await Promise.all(
      ['v-a', 'v-a', 'v-b'].map((ref) =>
        run({ nodeId: node, sinceMs: T0, now: T0 + HOUR, reason: 'x', ref }),
      ),
    );
    expect(results.filter((r) => r.applied)).toHaveLength(2);
    expect(results.reduce((s, r) => s + (r.applied ? r.refundedNano : 0n), 0n)).toBe(paid);
    expect(await balance(alice)).toBe(before.alice + paid);
    expect(await total()).toBe(before.total);
    await expectBooksBalanced({ db, ledger });
  });

  test('behavior: an unowned node forfeits its own account whole; a window without jobs refunds nothing', async () => {
    const [node, alice] = [address(), 'u-alice'];
    await fund(alice, 10_000_000n);
    await serve({ userId: alice, nodeId: node, providerNano: 300_000n, feeNano: 15_000n, at: T0 });
    const before = { alice: await balance(alice), platform: await balance(PLATFORM_ACCOUNT_ID) };
    const out = await run({
      nodeId: node,
      sinceMs: T0 + HOUR,
      now: T0 + 2 * HOUR,
      reason: 'x',
      ref: 'v-empty',
    });
    expect(out).toMatchObject({
      owner: null,
      jobs: 0,
      refundedNano: 0n,
      forfeitedNano: 300_000n,
      frozenNano: 300_000n,
    });
    expect(await balance(providerAccountId(node))).toBe(0n);
    expect(await balance(REFUND_POOL_ACCOUNT_ID)).toBe(300_000n);
    expect(await balance(alice)).toBe(before.alice);
    expect(await balance(PLATFORM_ACCOUNT_ID)).toBe(before.platform);
    await expectBooksBalanced({ db, ledger });
  });

  test('behavior: earnings already paid out: the platform gives back its fee, then the pool pays; nothing goes negative', async () => {
    const [node, owner, alice] = [address(), address(), 'u-alice'];
    await linkNode(store, { nodeId: node, owner, now: T0 });
    await fund(alice, 10_000_000n);
    const costs = [
      await serve({
        userId: alice,
        nodeId: node,
        owner,
        providerNano: 100_000n,
        feeNano: 10_000n,
        at: T0 + 1,
      }),
      await serve({ userId: alice, nodeId: node, owner, providerNano: 4_000n, feeNano: 1_000n, at: T0 + 2 }),
      await serve({
        userId: alice,
        nodeId: node,
        owner,
        providerNano: 100_000n,
        feeNano: 10_000n,
        at: T0 + 3,
      }),
    ];
    // The owner paid everything out (as provider/payout.ts debits it).
    const earned = await balance(providerAccountId(owner));
    const payoutId = newId(T0 + 4);
    await db
      .insertInto('provider_payouts')
      .values({
        id: payoutId,
        owner,
        idempotency_key: null,
        token: 'USDC.s',
        amount: `${earned / 1_000n}`,
        usd_nano: earned,
        to_address: owner,
        status: PAYOUT_STATUS.paid,
        tx_hash: '0x01',
        raw_tx: null,
        error_code: null,
        created_at: T0 + 4,
        updated_at: T0 + 4,
      })
      .execute();
    await applyEntry(db, {
      accountId: providerAccountId(owner),
      kind: ENTRY_KINDS.payout,
      amount: -earned,
      ref: payoutId,
      now: T0 + 4,
    });
    // Earnings of another node of the same owner, after the payout: not this node's to lose.
    await applyEntry(db, {
      accountId: providerAccountId(owner),
      kind: ENTRY_KINDS.adjustment,
      amount: 50_000n,
      ref: 'sibling-earnings',
      now: T0 + 5,
    });
    const platform = await balance(PLATFORM_ACCOUNT_ID);
    const before = { alice: await balance(alice), total: await total() };

    // The pool is empty: the fees (21,000) cover the small job (5,000) only.
    const out = await run({ nodeId: node, owner, sinceMs: T0, now: T0 + HOUR, reason: 'x', ref: 'v-paid' });
    expect(out).toMatchObject({
      jobs: 3,
      refundedJobs: 1,
      refundedNano: costs[1],
      unrefundedNano: costs[0]! + costs[2]!,
      forfeitedNano: 0n,
      feeReturnedNano: costs[1],
      fromPoolNano: 0n,
      frozenNano: 0n,
    });
    expect(await balance(providerAccountId(owner))).toBe(50_000n);
    expect(await balance(PLATFORM_ACCOUNT_ID)).toBe(platform - costs[1]!);
    expect(await balance(REFUND_POOL_ACCOUNT_ID)).toBe(0n);
    expect(await balance(alice)).toBe(before.alice + costs[1]!);

    // A later conviction's leftover fills the pool; a new conviction of this node pays the rest from it.
    const other = address();
    await applyEntry(db, {
      accountId: providerAccountId(other),
      kind: ENTRY_KINDS.adjustment,
      amount: 1_000_000n,
      ref: 'other-earnings',
      now: T0 + 6,
    });
    await run({ nodeId: other, sinceMs: T0 + 7, now: T0 + HOUR, reason: 'x', ref: 'v-other' });
    expect(await balance(REFUND_POOL_ACCOUNT_ID)).toBe(1_000_000n);
    const again = await run({
      nodeId: node,
      owner,
      sinceMs: T0,
      now: T0 + 2 * HOUR,
      reason: 'x',
      ref: 'v-paid-2',
    });
    expect(again).toMatchObject({
      jobs: 2,
      refundedNano: costs[0]! + costs[2]!,
      forfeitedNano: 0n,
      fromPoolNano: costs[0]! + costs[2]! - again.feeReturnedNano,
    });
    expect(await balance(alice)).toBe(before.alice + costs[0]! + costs[1]! + costs[2]!);
    expect(await balance(providerAccountId(owner))).toBe(50_000n);
    for (const account of [PLATFORM_ACCOUNT_ID, REFUND_POOL_ACCOUNT_ID, providerAccountId(owner)]) {
      expect(await balance(account)).toBeGreaterThanOrEqual(0n);
    }
    expect(await total()).toBe(before.total + 1_000_000n);
    await expectBooksBalanced({ db, ledger });
  });

  test('behavior: suspended by a verdict: convicted in the same transaction, the window from its last clear check', async () => {
    const [node, owner, alice] = [address(), address(), 'u-alice'];
    await linkNode(store, { nodeId: node, owner, now: T0 });
    await fund(alice, 10_000_000n);
    const kept = await serve({
      userId: alice,
      nodeId: node,
      owner,
      providerNano: 80_000n,
      feeNano: 4_000n,
      at: T0,
    });
    const verify = (verifyJobId: string, now: number) =>
      recordVerification(
        store,
        {
          nodeId: node,
          verifierId: 'coordinator',
          model: 'acme/liar-7b',
          sha256: 'ab'.repeat(32),
          jobId: `job-${verifyJobId}`,
          verifyJobId,
          judgement: FAIL,
          owner,
          now,
        },
        POLICY,
      );
    // A check that left no evidence: what the node served before it was vouched for.
    await recordVerification(
      store,
      {
        nodeId: node,
        verifierId: 'coordinator',
        model: 'acme/liar-7b',
        sha256: 'ab'.repeat(32),
        jobId: 'job-clear',
        verifyJobId: 'vj-0',
        judgement: {
          tokens: 32,
          logE: -2,
          meanExcess: 0,
          meanLogprob: -1,
          topKFraction: 1,
          scored: true,
          passed: true,
        },
        owner,
        now: T0 + HOUR / 2,
      },
      POLICY,
    );
    expect((await verify('vj-1', T0 + HOUR)).status).toBe(TRUST_STATUS.probation);
    const refunded = await serve({
      userId: alice,
      nodeId: node,
      owner,
      providerNano: 60_000n,
      feeNano: 3_000n,
      at: T0 + HOUR + 1,
    });
    const before = await balance(alice);
    expect((await verify('vj-2', T0 + 2 * HOUR)).status).toBe(TRUST_STATUS.suspended);
    expect(await balance(alice)).toBe(before + refunded);
    expect(kept).toBeGreaterThan(0n);
    expect(await balance(providerAccountId(owner))).toBe(0n);
    const audit = await db
      .selectFrom('trust_audit')
      .selectAll()
      .where('node_id', '=', node)
      .executeTakeFirstOrThrow();
    expect(audit).toMatchObject({ id: 'convict:vj-2', action: 'convict' });
    // The window opened at the last check that left no evidence against the node.
    expect(JSON.parse(audit.details)).toMatchObject({ sinceMs: T0 + HOUR / 2, refundedJobs: 1 });

    // Suspended on reputation alone: no conviction, no refund.
    const [slow, bobs] = [address(), 'u-bob'];
    await fund(bobs, 1_000_000n);
    await serve({ userId: bobs, nodeId: slow, providerNano: 10_000n, feeNano: 500n, at: T0 + 3 * HOUR });
    const bobBefore = await balance(bobs);
    await suspendNode(store, slow, 'reputation 12 < 25', T0 + 4 * HOUR);
    expect(await balance(bobs)).toBe(bobBefore);
    expect(await balance(providerAccountId(slow))).toBe(10_000n);
    expect(await db.selectFrom('trust_audit').select('id').where('node_id', '=', slow).execute()).toEqual([]);
    await expect(linkNode(store, { nodeId: slow, owner, now: T0 })).rejects.toMatchObject({
      code: 'node_suspended',
    });
    await expectBooksBalanced({ db, ledger });
  });
});
