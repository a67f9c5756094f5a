/**
 * A node's standing: probation, trusted or suspended, with its counters, evidence and (suspended)
 * the reason. The one source is the node's `node_trust` row (absent: never checked, on
 * probation); its only writers are trust-store.ts (a check's counters and evidence),
 * suspensions.ts (a suspension) and reinstate.ts (an operator lifts one). Everything else derives
 * from it: `Standings` keeps the status of the nodes connected here in memory (loaded when one
 * connects, moved by Suspensions after each write), for routing (probation.ts), the catalog's
 * verified counts and /v1/models; the reads below answer the rest (a connecting node, a payout, a
 * link of an owner).
 */
import type { Kysely } from 'kysely';
import { toBigInt } from '../../db/bigint.js';
import type { Database } from '../../db/schema.js';
import type { Store } from '../../db/store.js';
import { TRUST_STATUS, type TrustStatus } from '../../db/tables/trust.js';

export type Standing = {
  status: TrustStatus;
  passed: number;
  failed: number;
  /** The running evidence against the node (nats; suspended at CONVICTION_THRESHOLD). */
  evidence: number;
  reason: string | null;
};

/** A new node's standing: on probation, nothing against it. */
export const NEW_STANDING: Standing = {
  status: TRUST_STATUS.probation,
  passed: 0,
  failed: 0,
  evidence: 0,
  reason: null,
};

/** node_trust stores evidence × 10,000. */
export const fromE4 = (x: unknown) => Number(toBigInt(x as string | number | bigint)) / 10_000;

/** The status of each node connected here, as its node_trust row says (unknown: on probation). */
export class Standings {
  readonly #status = new Map<string, TrustStatus>();

  /** Bumped whenever a status changes (what depends on them, such as the catalog, can tell). */
  version = 0;

  statusOf(nodeId: string): TrustStatus {
    return this.#status.get(nodeId.toLowerCase()) ?? TRUST_STATUS.probation;
  }

  trusted(nodeId: string): boolean {
    return this.statusOf(nodeId) === TRUST_STATUS.trusted;
  }

  /** Reads a node's row as it connects. */
  async load(store: Store, nodeId: string): Promise<void> {
    const standing = (await standingsOf(store, [nodeId])).get(nodeId.toLowerCase());
    this.learn(nodeId, standing?.status ?? TRUST_STATUS.probation);
  }

  /** What the row says now (suspensions.ts, after each write). */
  learn(nodeId: string, status: TrustStatus): void {
    const id = nodeId.toLowerCase();
    if (this.#status.get(id) === status) return;
    this.#status.set(id, status);
    this.version++;
  }
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

/** The reason a node is suspended, or undefined (asked at each connection, hub/node-session.ts). */
export async function suspensionOf(db: Kysely<Database>, nodeId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('node_trust')
    .select(['status', 'reason'])
    .where('node_id', '=', nodeId.toLowerCase())
    .executeTakeFirst();
  return row?.status === TRUST_STATUS.suspended ? (row.reason ?? 'failed verification') : undefined;
}

/** The first suspended node (by id) linked to `owner`, if any: its earnings are held. */
export async function suspendedNodeOf(db: Kysely<Database>, owner: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('node_owners as o')
    .innerJoin('node_trust as t', 't.node_id', 'o.node_id')
    .select('o.node_id')
    .where('o.owner', '=', owner.toLowerCase())
    .where('t.status', '=', TRUST_STATUS.suspended)
    .orderBy('o.node_id')
    .executeTakeFirst();
  return row?.node_id;
}
