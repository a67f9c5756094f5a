/**
 * Each node's standing from its verifications: on probation until it passes `passesToTrust`, then
 * trusted; suspended once `failuresToSuspend` verifications failed since it was last trusted (the
 * reason names the evidence), and convicted in the same transaction (convict.ts: its clients
 * refunded, its earnings forfeited). A suspended node is refused at every connection until an
 * operator reinstates it (reinstate.ts: back on probation, with an audit row).
 */
import { sql } from 'kysely';
import { toBigInt } from '../db/bigint.js';
import { newId } from '../db/ids.js';
import type { Store } from '../db/store.js';
import { convict } from './convict.js';
import { evidenceWindowStart } from './evidence-window.js';
import type { Judgement } from './judge.js';
import { SLASH_STATUS, TRUST_STATUS, type TrustStatus } from './tables.js';

export type TrustPolicy = {
  failuresToSuspend: number;
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

export type Standing = { status: TrustStatus; passed: number; failed: number; reason: string | null };

/** Records one verification and moves the node's standing; returns the standing after it. */
export async function recordVerification(
  store: Store,
  r: VerificationRecord,
  policy: TrustPolicy,
): Promise<Standing> {
  const nodeId = r.nodeId.toLowerCase();
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
        tokens: r.judgement.tokens,
        mean_logprob_e4: Math.round(r.judgement.meanLogprob * 10_000),
        top_k_e4: Math.round(r.judgement.topKFraction * 10_000),
        passed: r.judgement.passed ? 1 : 0,
        source: r.source ?? 'canary',
        created_at: r.now,
      })
      .execute();
    const row = await trx
      .selectFrom('node_trust')
      .selectAll()
      .where('node_id', '=', nodeId)
      .executeTakeFirst();
    const before: Standing = row
      ? { status: row.status, passed: Number(row.passed), failed: Number(row.failed), reason: row.reason }
      : { status: TRUST_STATUS.probation, passed: 0, failed: 0, reason: null };
    if (before.status === TRUST_STATUS.suspended) return before;
    const passed = before.passed + (r.judgement.passed ? 1 : 0);
    const failed = before.failed + (r.judgement.passed ? 0 : 1);
    let next: Standing = { ...before, passed, failed };
    if (failed >= policy.failuresToSuspend) {
      const evidence = await trx
        .selectFrom('verifications')
        .select(['job_id', 'verify_job_id', 'verifier_id', 'tokens', 'mean_logprob_e4', 'top_k_e4'])
        .where('node_id', '=', nodeId)
        .where('passed', '=', 0)
        .orderBy('created_at', 'desc')
        .limit(policy.failuresToSuspend)
        .execute();
      const reason =
        `${failed} completions of model ${r.model} (sha256 ${r.sha256.slice(0, 12)}…) failed verification: ` +
        evidence
          .map(
            (e) =>
              `job ${e.job_id} mean logprob ${(Number(toBigInt(e.mean_logprob_e4)) / 10_000).toFixed(2)}, top-k ${(Number(toBigInt(e.top_k_e4)) / 100).toFixed(0)}%`,
          )
          .join('; ');
      next = { status: TRUST_STATUS.suspended, passed, failed, reason: reason.slice(0, 900) };
      // The money follows, in this transaction (convict.ts); the window opens at the first failure.
      const sinceMs = await evidenceWindowStart(trx, { nodeId, failed, now: r.now });
      await convict(trx, {
        nodeId,
        owner: r.owner,
        sinceMs,
        now: r.now,
        reason: next.reason!,
        ref: r.verifyJobId,
      });
      if (r.owner && policy.slashBps > 0) {
        const verifications = evidence.map((e) => ({
          jobId: e.job_id,
          verifyJobId: e.verify_job_id,
          verifier: e.verifier_id,
          tokens: Number(e.tokens),
          meanLogprob: Number(toBigInt(e.mean_logprob_e4)) / 10_000,
          topKFraction: Number(toBigInt(e.top_k_e4)) / 10_000,
        }));
        // One slash per suspension (keyed by the deciding verification); staking/slash.ts executes it.
        await trx
          .insertInto('slashes')
          .values({
            id: `slash-${r.verifyJobId}`,
            node_id: nodeId,
            owner: r.owner.toLowerCase(),
            fraction_bps: policy.slashBps,
            evidence: JSON.stringify({ nodeId, model: r.model, sha256: r.sha256, verifications }),
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
    } else if (before.status === TRUST_STATUS.probation && passed >= policy.passesToTrust) {
      next = { status: TRUST_STATUS.trusted, passed, failed: 0, reason: null };
    }
    await trx
      .insertInto('node_trust')
      .values({
        node_id: nodeId,
        passed,
        failed: next.failed,
        status: next.status,
        reason: next.reason,
        updated_at: r.now,
      })
      .onConflict((oc) =>
        oc.column('node_id').doUpdateSet({
          passed: sql`excluded.passed`,
          failed: sql`excluded.failed`,
          status: sql`excluded.status`,
          reason: sql`excluded.reason`,
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
