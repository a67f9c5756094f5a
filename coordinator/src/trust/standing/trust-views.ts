/**
 * What owners and the public see of the trust checks: each node's standing, reputation, last check
 * and (for its owner) its verification history and slashes; the network's recent suspensions.
 */
import type { Kysely } from 'kysely';
import { formatEther } from 'viem';
import type { Database } from '../../db/schema.js';
import { TRUST_ACTION, TRUST_STATUS, type TrustStatus } from '../../db/tables/trust.js';
import { CONVICTION_ID_PREFIX } from '../slashing/convict.js';
import { evidencePath } from '../slashing/evidence-hash.js';
import { reputationsOf } from './reputation.js';

/** Verifications listed per node in /api/provider/nodes. */
export const HISTORY_LIMIT = 20;

export type TrustSummary = {
  status: TrustStatus;
  reputation: number;
  /** ISO 8601, null before the first check. */
  lastCheckAt: string | null;
  /** Checks of the last 30 days. */
  passed: number;
  failed: number;
  /** The latest failed check of the last 30 days: when, and why (null when none failed). */
  lastFailure: { at: string; reason: string } | null;
};

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** How far back the checks a summary counts go (reputation.ts counts the same window). */
const CHECKS_WINDOW_MS = 30 * 86_400_000;

/** Standing, reputation, last check and last failed check of each node (lowercase ids). */
export async function trustSummaries(
  db: Kysely<Database>,
  nodeIds: readonly string[],
  now: number,
  isLive: (nodeId: string) => boolean,
): Promise<Map<string, TrustSummary>> {
  const ids = [...new Set(nodeIds.map((id) => id.toLowerCase()))];
  const [reputations, failures] = await Promise.all([
    reputationsOf(db, ids, now, isLive),
    ids.length === 0
      ? []
      : db
          .selectFrom('verifications')
          .select(['node_id', 'created_at', 'failure', 'evidence_e4'])
          .where('node_id', 'in', ids)
          .where('passed', '=', 0)
          .where('created_at', '>=', now - CHECKS_WINDOW_MS)
          .orderBy('created_at', 'desc')
          .execute(),
  ]);
  const lastFailure = new Map<string, { at: string; reason: string }>();
  for (const f of failures) {
    if (lastFailure.has(f.node_id)) continue; // newest first: the first is the latest
    lastFailure.set(f.node_id, { at: iso(Number(f.created_at))!, reason: failureReason(f) });
  }
  return new Map(
    [...reputations].map(([id, r]) => [
      id,
      {
        status: r.status,
        reputation: r.score,
        lastCheckAt: iso(r.verifications.lastAt),
        passed: r.verifications.passed,
        failed: r.verifications.failed,
        lastFailure: lastFailure.get(id) ?? null,
      },
    ]),
  );
}

/** Why a check failed: its claims did not hold together (`failure`), or its score said so. */
function failureReason(f: { failure: string | null; evidence_e4: string | number | bigint }): string {
  if (f.failure) return f.failure.slice(0, 200);
  return `its tokens scored unlike the model's own (ln e ${(Number(f.evidence_e4) / 10_000).toFixed(1)})`;
}

/** A node's latest verifications, newest first. */
export async function verificationHistory(db: Kysely<Database>, nodeId: string) {
  const rows = await db
    .selectFrom('verifications')
    .selectAll()
    .where('node_id', '=', nodeId.toLowerCase())
    .orderBy('created_at', 'desc')
    .limit(HISTORY_LIMIT)
    .execute();
  return rows.map((r) => ({
    at: new Date(Number(r.created_at)).toISOString(),
    source: r.source,
    model: r.model,
    jobId: r.job_id,
    verifier: r.verifier_id,
    tokens: Number(r.tokens),
    meanLogprob: Number(r.mean_logprob_e4) / 10_000,
    topKFraction: Number(r.top_k_e4) / 10_000,
    passed: Number(r.passed) === 1,
  }));
}

/** Slashes of a node's owner for this node, newest first (amounts in the native token). */
export async function slashesOf(db: Kysely<Database>, nodeId: string) {
  const rows = await db
    .selectFrom('slashes')
    .selectAll()
    .where('node_id', '=', nodeId.toLowerCase())
    .orderBy('created_at', 'desc')
    .execute();
  return rows.map((r) => ({
    at: new Date(Number(r.created_at)).toISOString(),
    status: r.status,
    fractionBps: Number(r.fraction_bps),
    amount: r.amount_wei === null ? null : formatEther(BigInt(r.amount_wei)),
    txHash: r.tx_hash,
    evidence: JSON.parse(r.evidence) as unknown,
    // The sha256 the staking pool's Slashed event names, and where anyone fetches the evidence.
    evidenceHash: r.evidence_hash,
    evidenceUrl: r.evidence_hash ? evidencePath(r.evidence_hash) : null,
  }));
}

export type Suspension = {
  nodeId: string;
  /** ISO 8601. */
  at: string;
  /** This suspension's own reason. */
  reason: string;
  /** Native tokens slashed for this suspension; null when none (unowned, nothing staked, not yet). */
  slashed: string | null;
  /** The slash's transaction in the staking pool, and its evidence's sha256 and URL; null without. */
  slashTxHash: string | null;
  evidenceHash: string | null;
  evidenceUrl: string | null;
};

/**
 * The network's latest suspensions (public), newest first, each with its own time, reason and
 * slash: every conviction (`trust_audit`, one row per suspension, even after a reinstatement; its
 * slash is `slash-<ref>` for its `convict:<ref>`), and the current suspensions that were no
 * conviction (a low reputation: node_trust alone records them).
 */
export async function recentSuspensions(db: Kysely<Database>, limit = 10): Promise<Suspension[]> {
  const [convictions, current] = await Promise.all([
    db
      .selectFrom('trust_audit')
      .select(['id', 'node_id', 'reason', 'created_at'])
      .where('action', '=', TRUST_ACTION.convict)
      .orderBy('created_at', 'desc')
      .limit(limit)
      .execute(),
    db
      .selectFrom('node_trust')
      .select(['node_id', 'reason', 'updated_at'])
      .where('status', '=', TRUST_STATUS.suspended)
      .orderBy('updated_at', 'desc')
      .limit(limit)
      .execute(),
  ]);
  const slashIds = convictions.map((c) => `slash-${c.id.slice(CONVICTION_ID_PREFIX.length)}`);
  const slashes =
    slashIds.length === 0
      ? []
      : await db
          .selectFrom('slashes')
          .select(['id', 'amount_wei', 'tx_hash', 'evidence_hash'])
          .where('id', 'in', slashIds)
          .execute();
  const slashed = new Map(slashes.map((s) => [s.id, s]));
  const slashOf = (id: string) => {
    const s = slashed.get(id);
    return {
      slashed: s?.amount_wei && s.amount_wei !== '0' ? formatEther(BigInt(s.amount_wei)) : null,
      slashTxHash: s?.tx_hash ?? null,
      evidenceHash: s?.evidence_hash ?? null,
      evidenceUrl: s?.evidence_hash ? evidencePath(s.evidence_hash) : null,
    };
  };
  // A conviction suspends in the same transaction, at the same time: that node_trust row is it.
  const convicted = new Set(convictions.map((c) => `${c.node_id} ${Number(c.created_at)}`));
  const out: (Suspension & { ms: number })[] = [
    ...convictions.map((c, i) => ({
      nodeId: c.node_id,
      ms: Number(c.created_at),
      at: iso(Number(c.created_at))!,
      reason: c.reason,
      ...slashOf(slashIds[i]!),
    })),
    ...current
      .filter((s) => !convicted.has(`${s.node_id} ${Number(s.updated_at)}`))
      .map((s) => ({
        nodeId: s.node_id,
        ms: Number(s.updated_at),
        at: iso(Number(s.updated_at))!,
        reason: s.reason ?? '',
        slashed: null,
        slashTxHash: null,
        evidenceHash: null,
        evidenceUrl: null,
      })),
  ];
  return out
    .sort((a, b) => b.ms - a.ms)
    .slice(0, limit)
    .map(({ ms: _ms, ...s }) => s);
}

/** Nodes suspended now (lowercase ids), the latest first: /network lists them although they are refused. */
export async function suspendedNodeIds(db: Kysely<Database>, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('node_trust')
    .select('node_id')
    .where('status', '=', TRUST_STATUS.suspended)
    .orderBy('updated_at', 'desc')
    .limit(limit)
    .execute();
  return rows.map((r) => r.node_id);
}
