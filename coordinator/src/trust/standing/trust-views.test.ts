/** What /network shows of the trust checks: each suspension with its own reason, failed checks. */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { SLASH_STATUS, TRUST_ACTION, TRUST_STATUS } from '../../db/tables/trust.js';
import { describeBackends, type TestDatabase } from '../../testing/index.js';
import { recentSuspensions, suspendedNodeIds, trustSummaries } from './trust-views.js';

const MIN = 60_000;
/** 2026-03-10T12:00:00Z. */
const T0 = Date.UTC(2026, 2, 10, 12);
const iso = (ms: number) => new Date(ms).toISOString();

describeBackends('trust views', (backend) => {
  let d: TestDatabase;
  beforeAll(async () => {
    d = await backend.open('trustviews');
  });
  afterAll(async () => {
    await d?.close();
  });

  const conviction = async (nodeId: string, ref: string, at: number, reason: string, slashedWei?: bigint) => {
    await d.db
      .insertInto('trust_audit')
      .values({
        id: `convict:${ref}`,
        node_id: nodeId,
        action: TRUST_ACTION.convict,
        actor: 'coordinator',
        reason,
        details: '{}',
        created_at: at,
      })
      .execute();
    if (slashedWei === undefined) return;
    await d.db
      .insertInto('slashes')
      .values({
        id: `slash-${ref}`,
        node_id: nodeId,
        owner: '0xowner',
        fraction_bps: 1000,
        evidence: '{}',
        evidence_hash: `0xe${ref}`,
        status: SLASH_STATUS.sent,
        amount_wei: slashedWei.toString(),
        stake_event_id: null,
        tx_hash: `0xtx${ref}`,
        raw_tx: null,
        created_at: at,
        updated_at: at,
      })
      .execute();
  };
  const standing = (nodeId: string, status: string, reason: string | null, at: number) =>
    d.db
      .insertInto('node_trust')
      .values({ node_id: nodeId, passed: 0, failed: 1, status: status as never, reason, updated_at: at })
      .execute();

  test('default: each suspension keeps its own time, reason and slash; reputation suspensions are listed too', async () => {
    // Convicted, reinstated, convicted again: two suspensions, each with its own reason and slash.
    await conviction('0xliar', 'v1', T0, 'first: job a failed', 10n ** 18n);
    await conviction('0xliar', 'v2', T0 + 10 * MIN, 'second: job b failed', 2n * 10n ** 18n);
    await standing('0xliar', TRUST_STATUS.suspended, 'second: job b failed', T0 + 10 * MIN);
    // Suspended for a low reputation: no conviction, no slash.
    await standing('0xslow', TRUST_STATUS.suspended, 'reputation 12 is below 25', T0 + 5 * MIN);
    // Convicted once, since reinstated.
    await conviction('0xback', 'v3', T0 - MIN, 'third: job c failed');
    await standing('0xback', TRUST_STATUS.probation, null, T0 + 20 * MIN);

    const slash = (ref: string) => ({
      slashTxHash: `0xtx${ref}`,
      evidenceHash: `0xe${ref}`,
      evidenceUrl: `/api/evidence/0xe${ref}`,
    });
    const none = { slashed: null, slashTxHash: null, evidenceHash: null, evidenceUrl: null };
    expect(await recentSuspensions(d.db)).toEqual([
      {
        nodeId: '0xliar',
        at: iso(T0 + 10 * MIN),
        reason: 'second: job b failed',
        slashed: '2',
        ...slash('v2'),
      },
      { nodeId: '0xslow', at: iso(T0 + 5 * MIN), reason: 'reputation 12 is below 25', ...none },
      { nodeId: '0xliar', at: iso(T0), reason: 'first: job a failed', slashed: '1', ...slash('v1') },
      { nodeId: '0xback', at: iso(T0 - MIN), reason: 'third: job c failed', ...none },
    ]);
    expect(await recentSuspensions(d.db, 2)).toHaveLength(2);
    expect(await suspendedNodeIds(d.db, 10)).toEqual(['0xliar', '0xslow']);
  });

  test('behavior: a node that failed a check carries its latest failure (when, why) and its counts', async () => {
    const check = (id: string, passed: number, at: number, failure: string | null, evidence: number) =>
      d.db
        .insertInto('verifications')
        .values({
          id,
          node_id: '0xchecked',
          verifier_id: '0xverifier',
          model: 'm',
          sha256: 'ab',
          job_id: `job-${id}`,
          verify_job_id: `verify-${id}`,
          tokens: 32,
          mean_logprob_e4: -12_000,
          top_k_e4: 9_000,
          passed,
          evidence_e4: evidence,
          failure,
          created_at: at,
        })
        .execute();
    await check('c1', 0, T0, 'claimed ids do not match the text', 0);
    await check('c2', 0, T0 + MIN, null, 23_000);
    await check('c3', 1, T0 + 2 * MIN, null, -5_000);
    const now = T0 + 3 * MIN;
    const summaries = await trustSummaries(d.db, ['0xChecked', '0xnever'], now, () => true);
    expect(summaries.get('0xchecked')).toMatchObject({
      status: TRUST_STATUS.probation,
      lastCheckAt: iso(T0 + 2 * MIN),
      passed: 1,
      failed: 2,
      lastFailure: { at: iso(T0 + MIN), reason: "its tokens scored unlike the model's own (ln e 2.3)" },
    });
    expect(summaries.get('0xnever')).toMatchObject({ lastCheckAt: null, lastFailure: null });
  });
});
