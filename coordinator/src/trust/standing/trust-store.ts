/**
 * Each node's evidence from its checks (NODE_PROTOCOL.md §9 "Deciding"): its running evidence is a
 * CUSUM of the checks' ln e-values (@gpumesh/protocol/internal `accumulate`). At CONVICTION_THRESHOLD the
 * check convicts: this returns the conviction and suspensions.ts, in the same transaction, suspends
 * the node, refunds its clients and orders its owner's slash. A check that also scored the claim's
 * cheaper quantizations (checks/substitution-ratio.ts) moves one more CUSUM per quantization, and
 * then each of the k statistics convicts at T + ln k (statistics-threshold.ts). A node on probation is trusted after
 * `passesToTrust` passed checks while its evidence is under half the threshold. A suspended node's
 * checks are recorded and move nothing.
 */
import { CHECK_CAP } from '@gpumesh/protocol/internal';
import { sql, type Transaction } from 'kysely';
import { toBigInt } from '../../db/bigint.js';
import { newId } from '../../db/ids.js';
import type { Database } from '../../db/schema.js';
import { TRUST_STATUS } from '../../db/tables/trust.js';
import type { EvidenceCheck } from '../slashing/slash-order.js';
import { fromE4, NEW_STANDING, type Standing } from './standings.js';
import { accumulateOf, thresholdOf } from './statistics-threshold.js';

/** What a check found (checks/judge.ts's Judgement is one). */
export type CheckResult = {
  tokens: number;
  /** ln of the check's e-value; > 0 counts against the node. */
  logE: number;
  meanLogprob: number;
  topKFraction: number;
  /** Whether the statistic judged the tokens. */
  scored: boolean;
  passed: boolean;
  /** Why the check failed outright, if it did. */
  failure?: string | undefined;
  /** ln q/p for each cheaper quantization scored, by quant (checks/substitution-ratio.ts). */
  substitution?: Readonly<Record<string, number>> | undefined;
};

export type VerificationRecord = {
  nodeId: string;
  verifierId: string;
  model: string;
  sha256: string;
  jobId: string;
  verifyJobId: string;
  judgement: CheckResult;
  /** The node's owner (its stake is slashed when the node is convicted); none: banned by node id. */
  owner?: string | undefined;
  source?: 'canary' | 'spot';
  now: number;
};

/** A check that took the evidence to the threshold: what suspensions.ts suspends the node with. */
export type Conviction = {
  nodeId: string;
  owner: string | undefined;
  /** The standing to write: suspended, the reason naming the evidence and its checks. */
  standing: Standing;
  /** node_trust.window_start: where the evidence rose from 0. */
  windowStart: number | null;
  /** The checks in the evidence, newest first (the slash's evidence names them). */
  checks: EvidenceCheck[];
  model: string;
  sha256: string;
  /** Where the refunded window opens (ms): windowStart, or now. */
  since: number;
  /** The deciding verification's id: one conviction and one slash per ref, ever. */
  ref: string;
  now: number;
};

export const e4 = (x: number) => Math.round(x * 10_000);

/**
 * Inside `trx`: records one check and moves the node's counters and evidence; returns the standing
 * after it, and the conviction when the evidence reached the threshold (the row is then left to
 * suspensions.ts, the one writer of a suspension).
 */
export async function recordCheck(
  trx: Transaction<Database>,
  r: VerificationRecord,
  policy: { passesToTrust: number },
): Promise<{ standing: Standing; conviction?: Conviction }> {
  const nodeId = r.nodeId.toLowerCase();
  const j = r.judgement;
  await trx
    .insertInto('verifications')
    .values({
      id: newId(r.now),
      node_id: nodeId,
      verifier_id: r.verifierId.toLowerCase(),
      model: r.model,
      sha256: r.sha256,
      job_id: r.jobId,
      verify_job_id: r.verifyJobId,
      tokens: j.tokens,
      mean_logprob_e4: e4(j.meanLogprob),
      top_k_e4: e4(j.topKFraction),
      // A check with no evidence against the node (a grammar-shaped answer is not scored) is no
      // failure: reputation and the owner's view count it with the passes.
      passed: j.passed || (!j.scored && !j.failure) ? 1 : 0,
      source: r.source ?? 'canary',
      evidence_e4: e4(j.logE),
      failure: j.failure ?? null,
      substitution_e4: j.substitution ? e4Json(j.substitution) : null,
      created_at: r.now,
    })
    .execute();
  const row = await trx.selectFrom('node_trust').selectAll().where('node_id', '=', nodeId).executeTakeFirst();
  const before: Standing = row
    ? {
        status: row.status,
        passed: Number(row.passed),
        failed: Number(row.failed),
        evidence: fromE4(row.evidence_e4),
        reason: row.reason,
      }
    : NEW_STANDING;
  if (before.status === TRUST_STATUS.suspended) return { standing: before };
  // k statistics: today's and one per cheaper quantization scored; a check failed outright counts
  // the cap in each.
  const k = 1 + Object.keys(j.substitution ?? {}).length;
  const step = (x: number) => (j.failure === undefined ? x : Number.POSITIVE_INFINITY);
  const evidence = accumulateOf(before.evidence, step(j.logE), k);
  const substitutionBefore = fromE4Json(row?.substitution_e4);
  const substitution = { ...substitutionBefore };
  for (const [quant, ratio] of Object.entries(j.substitution ?? {})) {
    substitution[quant] = accumulateOf(substitutionBefore[quant] ?? 0, step(ratio), k);
  }
  const passed = before.passed + (j.passed ? 1 : 0);
  const counted = j.scored || j.failure !== undefined;
  const failed = before.failed + (counted && !j.passed ? 1 : 0);
  const previousStart = row?.window_start == null ? null : Number(toBigInt(row.window_start));
  // The window a conviction refunds opens at the last check that left no evidence against the
  // node (what it served before that was vouched for), or at its first job when none did.
  const lastClear = row ? Number(toBigInt(row.updated_at)) : 0;
  const rose = Math.max(evidence, ...Object.values(substitution)) > 0;
  const wasUp = Math.max(before.evidence, ...Object.values(substitutionBefore)) > 0;
  const windowStart = rose ? (wasUp ? previousStart : lastClear) : null;
  // Stored to 4 decimals: two checks at the cap reach the threshold whatever the rounding.
  const threshold = thresholdOf(k) - 0.001;
  // Today's statistic named first when both cross: the reason a node convicted before would get.
  const by =
    evidence >= threshold
      ? undefined
      : Object.keys(j.substitution ?? {}).find((quant) => substitution[quant]! >= threshold);
  if (evidence >= threshold || by !== undefined) {
    const since = windowStart ?? r.now;
    const checks = await evidenceChecks(trx, nodeId, since, by);
    const reason = (
      by === undefined
        ? `evidence ${evidence.toFixed(1)} ≥ ${thresholdOf(k).toFixed(1)} nats that completions of model ${r.model} ` +
          `(sha256 ${r.sha256.slice(0, 12)}…) were not sampled from those weights: ` +
          checks.map((c) => `job ${c.jobId} ${c.failure ?? `ln e ${c.logE.toFixed(1)}`}`).join('; ')
        : `evidence ${substitution[by]!.toFixed(1)} ≥ ${thresholdOf(k).toFixed(1)} nats that completions of model ${r.model} ` +
          `(sha256 ${r.sha256.slice(0, 12)}…) were sampled from its cheaper ${by} file, not those weights: ` +
          checks
            .map((c) => `job ${c.jobId} ${c.failure ?? `ln q/p ${(c.substitution?.[by] ?? 0).toFixed(1)}`}`)
            .join('; ')
    ).slice(0, 900);
    const standing: Standing = { status: TRUST_STATUS.suspended, passed, failed, evidence, reason };
    return {
      standing,
      conviction: {
        nodeId,
        owner: r.owner,
        standing,
        windowStart,
        checks,
        model: r.model,
        sha256: r.sha256,
        since,
        ref: r.verifyJobId,
        now: r.now,
      },
    };
  }
  // Trusted only while every statistic is under half of what convicts.
  const highest = Math.max(evidence, ...Object.values(substitution));
  const trusted =
    before.status === TRUST_STATUS.probation && passed >= policy.passesToTrust && highest < CHECK_CAP;
  const next: Standing = trusted
    ? { status: TRUST_STATUS.trusted, passed, failed: 0, evidence, reason: null }
    : { ...before, passed, failed, evidence };
  await trx
    .insertInto('node_trust')
    .values({
      node_id: nodeId,
      passed,
      failed: next.failed,
      status: next.status,
      reason: next.reason,
      evidence_e4: e4(evidence),
      window_start: windowStart,
      substitution_e4: Object.keys(substitution).length > 0 ? e4Json(substitution) : null,
      updated_at: r.now,
    })
    .onConflict((oc) =>
      oc.column('node_id').doUpdateSet({
        passed: sql`excluded.passed`,
        failed: sql`excluded.failed`,
        status: sql`excluded.status`,
        reason: sql`excluded.reason`,
        evidence_e4: sql`excluded.evidence_e4`,
        window_start: sql`excluded.window_start`,
        substitution_e4: sql`excluded.substitution_e4`,
        updated_at: sql`excluded.updated_at`,
      }),
    )
    .execute();
  return { standing: next };
}

/**
 * The checks with evidence against the node since `since`, newest first (at most 8): by today's
 * statistic, or (`quant`) by that quantization's ln q/p.
 */
async function evidenceChecks(
  trx: Transaction<Database>,
  nodeId: string,
  since: number,
  quant?: string,
): Promise<EvidenceCheck[]> {
  const rows = await trx
    .selectFrom('verifications')
    .select([
      'job_id',
      'verify_job_id',
      'verifier_id',
      'tokens',
      'evidence_e4',
      'failure',
      'mean_logprob_e4',
      'substitution_e4',
    ])
    .where('node_id', '=', nodeId)
    .where('created_at', '>=', since)
    .$if(quant === undefined, (q) => q.where('evidence_e4', '>', 0))
    .$if(quant !== undefined, (q) => q.where('substitution_e4', 'is not', null))
    .orderBy('created_at', 'desc')
    .limit(quant === undefined ? 8 : 64)
    .execute();
  return rows
    .map((c) => ({
      jobId: c.job_id,
      verifyJobId: c.verify_job_id,
      verifier: c.verifier_id,
      tokens: Number(c.tokens),
      logE: fromE4(c.evidence_e4),
      failure: c.failure,
      meanLogprob: fromE4(c.mean_logprob_e4),
      ...(c.substitution_e4 ? { substitution: fromE4Json(c.substitution_e4) } : {}),
    }))
    .filter((c) => quant === undefined || (c.substitution?.[quant] ?? 0) > 0)
    .slice(0, 8);
}

/** {quant: x} as stored: {quant: x × 10,000}, JSON. */
function e4Json(values: Readonly<Record<string, number>>): string {
  return JSON.stringify(Object.fromEntries(Object.entries(values).map(([q, x]) => [q, e4(x)])));
}

function fromE4Json(text: string | null | undefined): Record<string, number> {
  if (!text) return {};
  const parsed = JSON.parse(text) as Record<string, number>;
  return Object.fromEntries(Object.entries(parsed).map(([q, x]) => [q, x / 10_000]));
}
