/**
 * k statistics of one node (statistics-threshold.ts) as trust-store.ts keeps them, on SQLite and
 * PostgreSQL: the Q4_0 statistic convicts at T + ln k while today's stays low; k statistics raise
 * the threshold of today's too (the false-conviction bound is shared); two checks failed outright
 * still convict.
 */
import { CONVICTION_THRESHOLD } from '@gpumesh/protocol/internal';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { expect, test } from 'vitest';
import { TRUST_STATUS } from '../../db/tables/trust.js';
import { describeBackends } from '../../testing/index.js';
import { ledgerFixture } from '../../testing/ledger-fixture.js';
import { failedCheck, type Judgement } from '../checks/judge.js';
import { thresholdOf } from './statistics-threshold.js';
import { Suspensions } from './suspensions.js';

const T0 = Date.UTC(2026, 0, 10);
const address = () => privateKeyToAccount(generatePrivateKey()).address.toLowerCase();
const scored = (logE: number, substitution?: Record<string, number>): Judgement => ({
  tokens: 25,
  logE,
  meanExcess: 0,
  meanLogprob: -1,
  topKFraction: 1,
  scored: true,
  passed: logE < Math.log(20),
  ...(substitution ? { substitution } : {}),
});

test('default: T + ln k, today’s threshold at k = 1', () => {
  expect(thresholdOf(1)).toBe(CONVICTION_THRESHOLD);
  expect(thresholdOf(3)).toBeCloseTo(CONVICTION_THRESHOLD + Math.log(3), 12);
});

describeBackends('statistics-threshold', (backend) => {
  const books = ledgerFixture(backend, 'statistics-threshold', T0);
  const checker = () => {
    const node = address();
    const suspensions = new Suspensions({ store: books.store, policy: { passesToTrust: 5, slashBps: 0 } });
    let i = 0;
    const record = (judgement: Judgement) => {
      i++;
      return suspensions.recordCheck({
        nodeId: node,
        verifierId: 'coordinator',
        model: 'gpumesh/mini-chat',
        sha256: 'ab'.repeat(32),
        jobId: `job-${i}`,
        verifyJobId: `vj-${node}-${i}`,
        judgement,
        now: T0 + i,
      });
    };
    const row = () =>
      books.db.selectFrom('node_trust').selectAll().where('node_id', '=', node).executeTakeFirstOrThrow();
    return { record, row };
  };

  test('behavior: the Q4_0 statistic convicts at T + ln 3 while today’s stays at 0', async () => {
    const { record, row } = checker();
    // 3 nats a check: 8 checks are 24 < 26.4, the 9th 27.
    for (let n = 1; n <= 8; n++) {
      const standing = await record(scored(-0.5, { Q8_0: -0.1, Q4_0: 3 }));
      expect(standing.status).toBe(TRUST_STATUS.probation);
    }
    // Each W ← max(0, W) + step: the last step shows below 0.
    expect(JSON.parse((await row()).substitution_e4!)).toEqual({ Q8_0: -1_000, Q4_0: 240_000 });
    expect(Number((await row()).evidence_e4)).toBe(-5_000);
    const standing = await record(scored(-0.5, { Q8_0: -0.1, Q4_0: 3 }));
    expect(standing.status).toBe(TRUST_STATUS.suspended);
    expect(standing.reason).toMatch(/^evidence 27\.0 ≥ 26\.4 nats .* sampled from its cheaper Q4_0 file/);
    expect(standing.reason).toContain('ln q/p 3.0');
  });

  test('behavior: with k = 3 today’s statistic needs T + ln 3 too; at k = 1, T', async () => {
    const three = checker();
    await three.record(scored(12.7, { Q8_0: 0, Q4_0: 0 }));
    expect((await three.record(scored(12.8, { Q8_0: 0, Q4_0: 0 }))).status).toBe(TRUST_STATUS.probation);
    expect(Number((await three.row()).evidence_e4)).toBe(255_000);
    const one = checker();
    await one.record(scored(12.7));
    expect((await one.record(scored(12.8))).status).toBe(TRUST_STATUS.suspended);
  });

  test('behavior: two checks failed outright convict whatever k', async () => {
    const { record } = checker();
    const failed = { ...failedCheck('no token ids', 25), substitution: { Q8_0: 0, Q4_0: 0 } };
    expect((await record(failed)).status).toBe(TRUST_STATUS.probation);
    const standing = await record(failed);
    expect(standing.status).toBe(TRUST_STATUS.suspended);
    expect(standing.reason).toMatch(/^evidence 26\.4 ≥ 26\.4 nats .* not sampled from those weights/);
  });
});
