/**
 * Conviction reaches the money, on SQLite and PostgreSQL, with the real ledger (reserve, settle,
 * usage rows): each client gets back exactly what it paid for the node's jobs in the window and
 * nothing for jobs before it; the node's earnings go to the refunds and the pool; a replay, a
 * concurrent conviction or another ref refunds nothing twice; an unowned node, a window without
 * jobs, earnings already paid out (the platform fee, then the pool; nothing negative); the books
 * balance after each (reconcile). A verdict's suspension convicting: trust-store.test.ts.
 */
import { sql } from 'kysely';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { expect, test } from 'vitest';
import { toBigInt } from '../../db/bigint.js';
import { newId } from '../../db/ids.js';
import {
  ENTRY_KINDS,
  PLATFORM_ACCOUNT_ID,
  providerAccountId,
  REFUND_POOL_ACCOUNT_ID,
} from '../../db/tables/ledger.js';
import { PAYOUT_STATUS } from '../../db/tables/provider.js';
import { applyEntry } from '../../ledger/apply-entry.js';
import { linkNode } from '../../provider/link-node.js';
import { describeBackends, expectBooksBalanced } from '../../testing/index.js';
import { ledgerFixture } from '../../testing/ledger-fixture.js';
import { type ConvictParams, convict } from './convict.js';

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 0, 10);

/** A fresh random address, lowercase (node ids and owners are addresses). */
const address = () => privateKeyToAccount(generatePrivateKey()).address.toLowerCase();

describeBackends('convict', (backend) => {
  const books = ledgerFixture(backend, 'convict', T0);
  const { balance, total, fund, serve } = books;
  const run = (params: ConvictParams) => books.db.transaction().execute((trx) => convict(trx, params));

  test('default: each client gets back what it paid in the window; the earnings go to refunds and the pool', async () => {
    const [node, owner, alice, bob] = [address(), address(), 'u-alice', 'u-bob'];
    await linkNode(books.store, { nodeId: node, owner, now: T0 });
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
    const refunds = await books.db
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
    const audit = await books.db.selectFrom('trust_audit').selectAll().where('node_id', '=', node).execute();
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
          await books.db
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
    await expectBooksBalanced(books);
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
    await expectBooksBalanced(books);
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
    await expectBooksBalanced(books);
  });

  test('behavior: earnings already paid out: the platform gives back its fee, then the pool pays; nothing goes negative', async () => {
    const [node, owner, alice] = [address(), address(), 'u-alice'];
    await linkNode(books.store, { nodeId: node, owner, now: T0 });
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
    await books.db
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
    await applyEntry(books.db, {
      accountId: providerAccountId(owner),
      kind: ENTRY_KINDS.payout,
      amount: -earned,
      ref: payoutId,
      now: T0 + 4,
    });
    // Earnings of another node of the same owner, after the payout: not this node's to lose.
    await applyEntry(books.db, {
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
    await applyEntry(books.db, {
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
    await expectBooksBalanced(books);
  });
});
