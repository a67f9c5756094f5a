/**
 * What owners and the public see of the trust checks: each node's standing, reputation, last check
 * and (for its owner) its verification history and slashes; the network's recent suspensions.
 */
import type { Kysely } from 'kysely';
import { formatEther } from 'viem';
import type { Database } from '../db/schema.js';
import { reputationsOf } from './reputation.js';
import type { TrustStatus } from './tables.js';

/** Verifications listed per node in /api/provider/nodes. */
export const HISTORY_LIMIT = 20;

export type TrustSummary = {
  status: TrustStatus;
  reputation: number;
  /** ISO 8601, null before the first check. */
  lastCheckAt: string | null;
  passed: number;
  failed: number;
};

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** Standing, reputation and last check of each node (lowercase ids). */
export async function trustSummaries(
  db: Kysely<Database>,
  nodeIds: readonly string[],
  now: number,
  isLive: (nodeId: string) => boolean,
): Promise<Map<string, TrustSummary>> {
  const reputations = await reputationsOf(db, nodeIds, now, isLive);
  return new Map(
    [...reputations].map(([id, r]) => [
      id,
      {
        status: r.status,
        reputation: r.score,
        lastCheckAt: iso(r.verifications.lastAt),
        passed: r.verifications.passed,
        failed: r.verifications.failed,
      },
    ]),
  );
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
  }));
}

/** The network's latest suspensions (public): node, when, why, and the stake slashed if any. */
export async function recentSuspensions(db: Kysely<Database>, limit = 10) {
  const rows = await db
    .selectFrom('node_trust')
    .leftJoin('slashes', 'slashes.node_id', 'node_trust.node_id')
    .select([
      'node_trust.node_id as nodeId',
      'node_trust.reason as reason',
      'node_trust.updated_at as at',
      'slashes.amount_wei as slashedWei',
    ])
    .where('node_trust.status', '=', 'suspended')
    .orderBy('node_trust.updated_at', 'desc')
    .limit(limit)
    .execute();
  return rows.map((r) => ({
    nodeId: r.nodeId,
    at: new Date(Number(r.at)).toISOString(),
    reason: r.reason ?? '',
    slashed: r.slashedWei ? formatEther(BigInt(r.slashedWei)) : null,
  }));
}
