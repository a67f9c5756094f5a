/**
 * A node suspended by a verdict (Suspensions.recordCheck) is convicted in the same transaction —
 * its clients refunded for the jobs since its last clear check, on SQLite and PostgreSQL with the
 * real ledger — while one suspended on reputation alone (suspendForReputation) is not; either way
 * its standing here says suspended. The conviction itself: slashing/convict.test.ts.
 */
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { expect, test } from 'vitest';
import { providerAccountId } from '../../db/tables/ledger.js';
import { TRUST_STATUS } from '../../db/tables/trust.js';
import { linkNode } from '../../provider/link-node.js';
import { describeBackends, expectBooksBalanced } from '../../testing/index.js';
import { ledgerFixture } from '../../testing/ledger-fixture.js';
import { failedCheck } from '../checks/judge.js';
import { Standings } from './standings.js';
import { Suspensions } from './suspensions.js';

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 0, 10);
const POLICY = { passesToTrust: 5, slashBps: 0 };
/** A check failed outright: half the evidence that convicts (two in a row do). */
const FAIL = failedCheck('no token ids', 32);

/** A fresh random address, lowercase (node ids and owners are addresses). */
const address = () => privateKeyToAccount(generatePrivateKey()).address.toLowerCase();

describeBackends('trust-store', (backend) => {
  const books = ledgerFixture(backend, 'trust-store', T0);
  const { balance, fund, serve } = books;

  test('behavior: suspended by a verdict: convicted in the same transaction, the window from its last clear check', async () => {
    const [node, owner, alice] = [address(), address(), 'u-alice'];
    const standings = new Standings();
    const suspensions = new Suspensions({ store: books.store, policy: POLICY, standings });
    await linkNode(books.store, { nodeId: node, owner, now: T0 });
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
      suspensions.recordCheck({
        nodeId: node,
        verifierId: 'coordinator',
        model: 'acme/liar-7b',
        sha256: 'ab'.repeat(32),
        jobId: `job-${verifyJobId}`,
        verifyJobId,
        judgement: FAIL,
        owner,
        now,
      });
    // A check that left no evidence: what the node served before it was vouched for.
    await suspensions.recordCheck({
      nodeId: node,
      verifierId: 'coordinator',
      model: 'acme/liar-7b',
      sha256: 'ab'.repeat(32),
      jobId: 'job-clear',
      verifyJobId: 'vj-0',
      judgement: {
        tokens: 32,
        logE: -2,
        meanLogprob: -1,
        topKFraction: 1,
        scored: true,
        passed: true,
      },
      owner,
      now: T0 + HOUR / 2,
    });
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
    expect(standings.statusOf(node)).toBe(TRUST_STATUS.suspended);
    expect(kept).toBeGreaterThan(0n);
    expect(await balance(providerAccountId(owner))).toBe(0n);
    const audit = await books.db
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
    await suspensions.suspendForReputation(slow, 'reputation 12 < 25', T0 + 4 * HOUR);
    expect(await balance(bobs)).toBe(bobBefore);
    expect(standings.statusOf(slow)).toBe(TRUST_STATUS.suspended);
    expect(await balance(providerAccountId(slow))).toBe(10_000n);
    expect(
      await books.db.selectFrom('trust_audit').select('id').where('node_id', '=', slow).execute(),
    ).toEqual([]);
    await expect(linkNode(books.store, { nodeId: slow, owner, now: T0 })).rejects.toMatchObject({
      code: 'node_suspended',
    });
    await expectBooksBalanced(books);
  });
});
