/**
 * Each node's standing from its checks (NODE_PROTOCOL.md §9 "Deciding"): its running evidence is a
 * CUSUM of the checks' ln e-values (@gpumesh/protocol `accumulate`); at CONVICTION_THRESHOLD the
 * node is suspended with the evidence, its owner's stake slashed and, in the same transaction,
 * convicted (convict.ts: its clients in the evidence window refunded, its earnings forfeited). A
 * node on probation is trusted after `passesToTrust` passed checks while its evidence is under half
 * the threshold. A suspended node is refused at every connection until an operator reinstates it
 * (reinstate.ts: back on probation, with an audit row).
 */
import { accumulate, CHECK_CAP, CONVICTION_THRESHOLD } from '@gpumesh/protocol';
import { sql } from 'kysely';
import { toBigInt } from '../../db/bigint.js';
import { newId } from '../../db/ids.js';
import type { Store } from '../../db/store.js';
import { SLASH_STATUS, TRUST_STATUS, type TrustStatus } from '../../db/tables/trust.js';
import type { Judgement } from '../checks/judge.js';
import { convict } from '../slashing/convict.js';
import { evidenceHashOf } from '../slashing/evidence-hash.js';

export type TrustPolicy = {
  passesToTrust: number;
  /** Share of the owner's stake (basis points) a suspension slashes. */
  slashBps: number;
};

export type VerificationRecord = {
  nodeId: string;
  verifierId: string;
  model: string;
  sha256: string;
  jobId: string;
  verifyJobId: string;
  judgement: Judgement;
  /** The node's owner (its stake is slashed when the node is suspended); none: banned by node id. */
  owner?: string | undefined;
  source?: 'canary' | 'spot';
  now: number;
};

export type Standing = {
  status: TrustStatus;
  passed: number;
  failed: number;
  /** The running evidence against the node (nats; suspended at CONVICTION_THRESHOLD). */
  evidence: number;
  reason: string | null;
};

const e4 = (x: number) => Math.round(x * 10_000);
const fromE4 = (x: unknown) => Number(toBigInt(x as string | number | bigint)) / 10_000;

/** Records one check and moves the node's standing; returns the standing after it. */
export async function recordVerification(
  store: Store,
  r: VerificationRecord,
  policy: TrustPolicy,
): Promise<Standing> {
  const nodeId = r.nodeId.toLowerCase();
  const j = r.judgement;
  return store.db.transaction().execute(async (trx) => {
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
        created_at: r.now,
      })
      .execute();
    const row = await trx
      .selectFrom('node_trust')
      .selectAll()
      .where('node_id', '=', nodeId)
      .executeTakeFirst();
    const before: Standing = row
      ? {
          status: row.status,
          passed: Number(row.passed),
          failed: Number(row.failed),
          evidence: fromE4(row.evidence_e4),
          reason: row.reason,
        }
      : { status: TRUST_STATUS.probation, passed: 0, failed: 0, evidence: 0, reason: null };
    if (before.status === TRUST_STATUS.suspended) return before;
    const evidence = accumulate(before.evidence, j.logE);
    const passed = before.passed + (j.passed ? 1 : 0);
    const counted = j.scored || j.failure !== undefined;
    const failed = before.failed + (counted && !j.passed ? 1 : 0);
    const previousStart = row?.window_start == null ? null : Number(toBigInt(row.window_start));
    // The window a conviction refunds opens at the last check that left no evidence against the
    // node (what it served before that was vouched for), or at its first job when none did.
    const lastClear = row ? Number(toBigInt(row.updated_at)) : 0;
    const windowStart = evidence > 0 ? (before.evidence > 0 ? previousStart : lastClear) : null;
    let next: Standing = { ...before, passed, failed, evidence };
    // Stored to 4 decimals: two checks at the cap reach the threshold whatever the rounding.
    if (evidence >= CONVICTION_THRESHOLD - 0.001) {
      const since = windowStart ?? r.now;
      const checks = await trx
        .selectFrom('verifications')
        .select([
          'job_id',
          'verify_job_id',
          'verifier_id',
          'tokens',
          'evidence_e4',
          'failure',
          'mean_logprob_e4',
        ])
        .where('node_id', '=', nodeId)
        .where('created_at', '>=', since)
        .where('evidence_e4', '>', 0)
        .orderBy('created_at', 'desc')
        .limit(8)
        .execute();
      const reason =
        `evidence ${evidence.toFixed(1)} ≥ ${CONVICTION_THRESHOLD.toFixed(1)} nats that completions of model ${r.model} ` +
        `(sha256 ${r.sha256.slice(0, 12)}…) were not sampled from those weights: ` +
        checks
          .map((c) => `job ${c.job_id} ${c.failure ?? `ln e ${fromE4(c.evidence_e4).toFixed(1)}`}`)
          .join('; ');
      next = { status: TRUST_STATUS.suspended, passed, failed, evidence, reason: reason.slice(0, 900) };
      // The money follows, in this transaction (convict.ts): the window opens where the evidence rose from 0.
      await convict(trx, {
        nodeId,
        owner: r.owner,
        sinceMs: since,
        now: r.now,
        reason: next.reason!,
        ref: r.verifyJobId,
      });
      if (r.owner && policy.slashBps > 0) {
        const verifications = checks.map((c) => ({
          jobId: c.job_id,
          verifyJobId: c.verify_job_id,
          verifier: c.verifier_id,
          tokens: Number(c.tokens),
          logE: fromE4(c.evidence_e4),
          failure: c.failure,
          meanLogprob: fromE4(c.mean_logprob_e4),
        }));
        const evidenceJson = JSON.stringify({
          nodeId,
          model: r.model,
          sha256: r.sha256,
          evidence,
          since,
          verifications,
        });
        // One slash per suspension (keyed by the deciding verification); staking/slash.ts executes it,
        // naming the evidence's hash on chain; GET /api/evidence/<hash> serves it from now on.
        await trx
          .insertInto('slashes')
          .values({
            id: `slash-${r.verifyJobId}`,
            node_id: nodeId,
            owner: r.owner.toLowerCase(),
            fraction_bps: policy.slashBps,
            evidence: evidenceJson,
            evidence_hash: evidenceHashOf(evidenceJson),
            status: SLASH_STATUS.pending,
            amount_wei: null,
            stake_event_id: null,
            tx_hash: null,
            raw_tx: null,
            created_at: r.now,
            updated_at: r.now,
          })
          .onConflict((oc) => oc.column('id').doNothing())
          .execute();
      }
    } else if (
      before.status === TRUST_STATUS.probation &&
      passed >= policy.passesToTrust &&
      evidence < CHECK_CAP
    ) {
      next = { status: TRUST_STATUS.trusted, passed, failed: 0, evidence, reason: null };
    }
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
          updated_at: sql`excluded.updated_at`,
        }),
      )
      .execute();
    return next;
  });
}

/** The reason a node is suspended, or undefined. */
export async function suspensionOf(store: Store, nodeId: string): Promise<string | undefined> {
  const row = await store.db
    .selectFrom('node_trust')
    .select(['status', 'reason'])
    .where('node_id', '=', nodeId.toLowerCase())
    .executeTakeFirst();
  return row?.status === TRUST_STATUS.suspended ? (row.reason ?? 'failed verification') : undefined;
}

/** Standings of these nodes (lowercase ids; absent: never verified, on probation). */
export async function standingsOf(store: Store, nodeIds: readonly string[]): Promise<Map<string, Standing>> {
  const out = new Map<string, Standing>();
  if (nodeIds.length === 0) return out;
  const rows = await store.db
    .selectFrom('node_trust')
    .selectAll()
    .where(
      'node_id',
      'in',
      nodeIds.map((id) => id.toLowerCase()),
    )
    .execute();
  for (const r of rows) {
    out.set(r.node_id, {
      status: r.status,
      passed: Number(r.passed),
      failed: Number(r.failed),
      evidence: fromE4(r.evidence_e4),
      reason: r.reason,
    });
  }
  return out;
}

/**
 * Suspends a node for a reason other than a verification verdict (reputation.ts): no slash and no
 * conviction — a low score is not proof that its answers were false, so its clients are not
 * refunded and its earnings not forfeited; they stay in its account, held (no link, no payout)
 * until an operator reinstates it.
 */
export async function suspendNode(store: Store, nodeId: string, reason: string, now: number): Promise<void> {
  const id = nodeId.toLowerCase();
  await store.db
    .insertInto('node_trust')
    .values({ node_id: id, passed: 0, failed: 0, status: TRUST_STATUS.suspended, reason, updated_at: now })
    .onConflict((oc) =>
      oc.column('node_id').doUpdateSet({ status: TRUST_STATUS.suspended, reason, updated_at: now }),
    )
    .execute();
}
