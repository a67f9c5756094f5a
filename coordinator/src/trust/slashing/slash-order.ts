/**
 * A conviction's slash order: one `slashes` row per suspension of an owned node (keyed by the
 * deciding verification), with the evidence that decided it; staking/slash.ts carries it out,
 * naming the evidence's hash on chain, and GET /api/evidence/<hash> serves it (evidence-routes.ts).
 */
import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import { SLASH_STATUS } from '../../db/tables/trust.js';
import { evidenceHashOf } from './evidence-hash.js';

/** One check counted in the evidence (newest first, at most 8). */
export type EvidenceCheck = {
  jobId: string;
  verifyJobId: string;
  verifier: string;
  tokens: number;
  logE: number;
  failure: string | null;
  meanLogprob: number;
  /** ln q/p for each cheaper quantization scored, by quant (checks/substitution-ratio.ts); absent: none. */
  substitution?: Record<string, number>;
};

export type SlashOrder = {
  nodeId: string;
  owner: string;
  /** Share of the owner's stake, basis points. */
  bps: number;
  /** The deciding verification's id. */
  ref: string;
  model: string;
  sha256: string;
  /** The node's evidence when convicted (nats) and where its window opened (ms). */
  evidence: number;
  since: number;
  checks: readonly EvidenceCheck[];
  now: number;
};

/** Inside the suspension's transaction: orders the slash (once per `ref`). */
export async function orderSlash(trx: Transaction<Database>, o: SlashOrder): Promise<void> {
  const evidenceJson = JSON.stringify({
    nodeId: o.nodeId,
    model: o.model,
    sha256: o.sha256,
    evidence: o.evidence,
    since: o.since,
    verifications: o.checks,
  });
  await trx
    .insertInto('slashes')
    .values({
      id: `slash-${o.ref}`,
      node_id: o.nodeId,
      owner: o.owner.toLowerCase(),
      fraction_bps: o.bps,
      evidence: evidenceJson,
      evidence_hash: evidenceHashOf(evidenceJson),
      status: SLASH_STATUS.pending,
      amount_wei: null,
      stake_event_id: null,
      tx_hash: null,
      raw_tx: null,
      created_at: o.now,
      updated_at: o.now,
    })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
}
