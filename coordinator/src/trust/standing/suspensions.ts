/**
 * Suspensions: the only writer of a suspension and the one place that acts on it. A node is
 * suspended for one of two causes:
 * - a conviction: a check took its evidence to CONVICTION_THRESHOLD (trust-store.ts). In the
 *   check's transaction, its clients in the evidence window are refunded and its unpaid earnings
 *   forfeited (slashing/convict.ts), its owner's stake slash ordered (slashing/slash-order.ts,
 *   carried out by staking/slash.ts), and its row written suspended with the evidence as reason;
 * - a low reputation (reputation-guard.ts): the row alone, with the figures as reason — a low score
 *   is no proof its answers were false, so nothing is refunded, forfeited or slashed; its earnings
 *   stay in its account, held (no link, no payout) until an operator reinstates it.
 * Either way, once written: the node's standing here says suspended (standings.ts: routing,
 * probation, the catalog), and a node connected here is told why in an `error` frame and closed
 * (4012), which takes it out of the pick index; it is refused at every connection after
 * (hub/node-session.ts asks standings.ts `suspensionOf`) until reinstate.ts lifts it.
 */
import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Store } from '../../db/store.js';
import { TRUST_STATUS } from '../../db/tables/trust.js';
import { convict } from '../slashing/convict.js';
import { orderSlash } from '../slashing/slash-order.js';
import type { Standing, Standings } from './standings.js';
import { type Conviction, e4, recordCheck, type VerificationRecord } from './trust-store.js';

export type SuspensionPolicy = {
  /** Passed checks that end a node's probation. */
  passesToTrust: number;
  /** Share of the owner's stake (basis points) a conviction slashes. */
  slashBps: number;
};

export type SuspensionsDeps = {
  store: Store;
  policy: SuspensionPolicy;
  /** The nodes' standings here; none: only the rows are written (a command line, a test). */
  standings?: Standings | undefined;
  /** Closes a node connected here (hub.suspend: told why, 4012, out of the pick index). */
  hub?: { suspend(nodeId: string, reason: string): boolean } | undefined;
  log?: { warn(obj: object, msg: string): void } | undefined;
};

export class Suspensions {
  readonly #deps: SuspensionsDeps;

  constructor(deps: SuspensionsDeps) {
    this.#deps = deps;
  }

  /**
   * Records one check of a node (trust-store.ts); when it convicts, suspends the node in the same
   * transaction. Returns the node's standing after it.
   */
  async recordCheck(r: VerificationRecord): Promise<Standing> {
    const standing = await this.#deps.store.db.transaction().execute(async (trx) => {
      const moved = await recordCheck(trx, r, this.#deps.policy);
      if (moved.conviction) await this.#convictIn(trx, moved.conviction);
      return moved.standing;
    });
    // Convicted now, or suspended before (here or by another replica): acted on here.
    if (standing.status === TRUST_STATUS.suspended && standing.reason) this.#acted(r.nodeId, standing.reason);
    else this.#deps.standings?.learn(r.nodeId, standing.status);
    return standing;
  }

  /** Suspends a node for a low reputation (reputation-guard.ts): the row alone, no money moved. */
  async suspendForReputation(nodeId: string, reason: string, now: number): Promise<void> {
    const id = nodeId.toLowerCase();
    await this.#deps.store.db
      .insertInto('node_trust')
      .values({ node_id: id, passed: 0, failed: 0, status: TRUST_STATUS.suspended, reason, updated_at: now })
      .onConflict((oc) =>
        oc.column('node_id').doUpdateSet({ status: TRUST_STATUS.suspended, reason, updated_at: now }),
      )
      .execute();
    this.#acted(nodeId, reason);
  }

  /** A conviction, inside the check's transaction: the money first, then the row. */
  async #convictIn(trx: Transaction<Database>, c: Conviction): Promise<void> {
    const reason = c.standing.reason!;
    // The window opens where the evidence rose from 0.
    await convict(trx, {
      nodeId: c.nodeId,
      owner: c.owner,
      sinceMs: c.since,
      now: c.now,
      reason,
      ref: c.ref,
    });
    const { slashBps } = this.#deps.policy;
    if (c.owner && slashBps > 0) {
      await orderSlash(trx, {
        nodeId: c.nodeId,
        owner: c.owner,
        bps: slashBps,
        ref: c.ref,
        model: c.model,
        sha256: c.sha256,
        evidence: c.standing.evidence,
        since: c.since,
        checks: c.checks,
        now: c.now,
      });
    }
    const row = {
      passed: c.standing.passed,
      failed: c.standing.failed,
      status: TRUST_STATUS.suspended,
      reason,
      evidence_e4: e4(c.standing.evidence),
      window_start: c.windowStart,
      updated_at: c.now,
    };
    await trx
      .insertInto('node_trust')
      .values({ node_id: c.nodeId, ...row })
      .onConflict((oc) => oc.column('node_id').doUpdateSet(row))
      .execute();
  }

  /** What a written suspension does here: the standing, and the node's session closed. */
  #acted(nodeId: string, reason: string): void {
    this.#deps.standings?.learn(nodeId, TRUST_STATUS.suspended);
    this.#deps.log?.warn({ nodeId, reason }, 'node suspended');
    this.#deps.hub?.suspend(nodeId, reason);
  }
}
