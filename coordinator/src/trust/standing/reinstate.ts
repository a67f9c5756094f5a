import { sql } from 'kysely';
import { newId } from '../../db/ids.js';
import { lockInTransaction } from '../../db/lock-in-transaction.js';
import type { Store } from '../../db/store.js';
import { TRUST_ACTION, TRUST_STATUS, type TrustStatus } from '../../db/tables/trust.js';

export type ReinstateParams = {
  nodeId: string;
  /** Why the operator lifts the suspension; stored in the audit row. */
  reason: string;
  /** Who: `operator` from the command line. */
  actor: string;
  now: number;
};

export type ReinstateResult =
  | {
      ok: true;
      nodeId: string;
      auditId: string;
      before: { passed: number; failed: number; reason: string | null };
    }
  /** Nothing changed: the node was never verified or suspended, or it is not suspended now. */
  | { ok: false; nodeId: string; problem: 'unknown_node' }
  | { ok: false; nodeId: string; problem: 'not_suspended'; status: TrustStatus };

/**
 * An operator's reinstatement of a suspended node: back on probation with its counters and its
 * evidence (the reason) cleared, and a `trust_audit` row saying who, why and what the standing
 * was. The money a conviction moved stays where it went (refunds are not taken back, forfeited
 * earnings stay in the refund pool); an operator who finds a conviction wrong makes that right with
 * an adjustment. The only way out of a suspension: nothing deletes node_trust rows.
 */
export async function reinstate(store: Store, p: ReinstateParams): Promise<ReinstateResult> {
  const nodeId = p.nodeId.toLowerCase();
  return store.db.transaction().execute(async (trx) => {
    // As convict.ts does for this node, so a conviction and a reinstatement never interleave.
    await lockInTransaction(trx, `node:${nodeId}`);
    // A write first: it locks the row on PostgreSQL, and on SQLite the transaction holds the
    // database from here on (a read first could not be upgraded once a server process wrote).
    await trx
      .updateTable('node_trust')
      .set({ updated_at: sql`updated_at` })
      .where('node_id', '=', nodeId)
      .execute();
    const before = await trx
      .selectFrom('node_trust')
      .select(['status', 'passed', 'failed', 'reason'])
      .where('node_id', '=', nodeId)
      .executeTakeFirst();
    if (!before) return { ok: false, nodeId, problem: 'unknown_node' };
    if (before.status !== TRUST_STATUS.suspended) {
      return { ok: false, nodeId, problem: 'not_suspended', status: before.status };
    }
    await trx
      .updateTable('node_trust')
      .set({
        status: TRUST_STATUS.probation,
        passed: 0,
        failed: 0,
        reason: null,
        // Its evidence too, as documented (every statistic: a reinstated node starts afresh).
        evidence_e4: 0,
        window_start: null,
        substitution_e4: null,
        updated_at: p.now,
      })
      .where('node_id', '=', nodeId)
      .execute();
    const previous = { passed: Number(before.passed), failed: Number(before.failed), reason: before.reason };
    const auditId = newId(p.now);
    await trx
      .insertInto('trust_audit')
      .values({
        id: auditId,
        node_id: nodeId,
        action: TRUST_ACTION.reinstate,
        actor: p.actor,
        reason: p.reason,
        details: JSON.stringify({ before: { status: before.status, ...previous } }),
        created_at: p.now,
      })
      .execute();
    return { ok: true, nodeId, auditId, before: previous };
  });
}
