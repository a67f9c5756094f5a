/**
 * Reputation: one score per node, 0…100, from what it did —
 *   score = 100 × (0.4·V + 0.2·B + 0.2·R + 0.2·U)
 * - V, verification: (passed + 1) / (passed + failed + 2) over its verifications of the last 30
 *   days (a node never checked is at ½);
 * - B, usage bounds: 1 / (1 + its usage reports clamped as over the coordinator's bound);
 * - R, reliability: (completed + 1) / (completed + failed + missed + 2) over the last 7 days
 *   (failed: billed jobs it died or erred in; missed: jobs it gave no first token for in time, or
 *   lost, or failed in its runtime — counted by the router in `node_misses`);
 * - U, uptime: its share of the last 7 days connected (a new node starts low; uptime alone can't
 *   take a node below the threshold).
 * A node scoring below `trust.minReputation` (25: a node needs to be bad on several counts) is
 * suspended like a liar (but not slashed: slashing takes failed verifications). Routing then never
 * reaches it, so routing is "the cheapest of the nodes above the threshold".
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { TRUST_STATUS, type TrustStatus } from '../../db/tables/trust.js';
import { uptimeOf } from '../../hub/node-sessions.js';
import { readNodeJobs } from '../../usage/read-node-jobs.js';

const DAY_MS = 86_400_000;

export type Reputation = {
  score: number;
  status: TrustStatus;
  verifications: { passed: number; failed: number; lastAt: number | null };
  violations: number;
  jobs: { completed: number; failed: number; missed: number };
  uptime7d: number;
};

/** The score of these parts (rounded to an integer). */
export function scoreOf(parts: Omit<Reputation, 'score' | 'status'>): number {
  const { passed, failed } = parts.verifications;
  const v = (passed + 1) / (passed + failed + 2);
  const b = 1 / (1 + parts.violations);
  const { completed, failed: jobsFailed, missed } = parts.jobs;
  const r = (completed + 1) / (completed + jobsFailed + missed + 2);
  return Math.round(100 * (0.4 * v + 0.2 * b + 0.2 * r + 0.2 * parts.uptime7d));
}

/** Reputations of these nodes (lowercase ids) at `now`; `isLive` says which are connected now. */
export async function reputationsOf(
  db: Kysely<Database>,
  nodeIds: readonly string[],
  now: number,
  isLive: (nodeId: string) => boolean,
): Promise<Map<string, Reputation>> {
  const ids = [...new Set(nodeIds.map((id) => id.toLowerCase()))];
  const out = new Map<string, Reputation>();
  if (ids.length === 0) return out;
  const weekAgo = new Date(now - 7 * DAY_MS).toISOString().slice(0, 10);
  const [checks, standings, violations, jobs, misses, uptime] = await Promise.all([
    db
      .selectFrom('verifications')
      .select(['node_id', 'passed'])
      .select((eb) => [eb.fn.countAll<string>().as('n'), eb.fn.max('created_at').as('last')])
      .where('node_id', 'in', ids)
      .where('created_at', '>=', now - 30 * DAY_MS)
      .groupBy(['node_id', 'passed'])
      .execute(),
    db.selectFrom('node_trust').select(['node_id', 'status']).where('node_id', 'in', ids).execute(),
    db
      .selectFrom('node_usage_violations')
      .select(['node_id', 'violations'])
      .where('node_id', 'in', ids)
      .execute(),
    readNodeJobs(db, ids, now - 7 * DAY_MS),
    db
      .selectFrom('node_misses')
      .select('node_id')
      .select((eb) => eb.fn.sum<string>('misses').as('n'))
      .where('node_id', 'in', ids)
      .where('day', '>=', weekAgo)
      .groupBy('node_id')
      .execute(),
    uptimeOf(db, ids, { from: now - 7 * DAY_MS, to: now }, isLive, { wholeWindow: true }),
  ]);
  // Each query's rows grouped by node once: a node's parts are map lookups, not scans of the lists.
  const checksOf = groupBy(checks);
  const standingOf = new Map(standings.map((s) => [s.node_id, s.status]));
  const violationsOf = new Map(violations.map((v) => [v.node_id, Number(v.violations)]));
  const missesOf = new Map(misses.map((m) => [m.node_id, Number(m.n ?? 0)]));
  for (const id of ids) {
    const mine = checksOf.get(id) ?? [];
    const count = (passed: number) => Number(mine.find((c) => Number(c.passed) === passed)?.n ?? 0);
    const times = mine.map((c) => Number(c.last ?? 0)).filter((t) => t > 0);
    const last = times.length > 0 ? Math.max(...times) : null;
    const parts = {
      verifications: { passed: count(1), failed: count(0), lastAt: last },
      violations: violationsOf.get(id) ?? 0,
      jobs: {
        completed: jobs.get(id)?.completed ?? 0,
        failed: jobs.get(id)?.failed ?? 0,
        missed: missesOf.get(id) ?? 0,
      },
      uptime7d: uptime.get(id) ?? 0,
    };
    out.set(id, {
      ...parts,
      score: scoreOf(parts),
      status: standingOf.get(id) ?? TRUST_STATUS.probation,
    });
  }
  return out;
}

/** Rows by their node id. */
function groupBy<T extends { node_id: string }>(rows: readonly T[]): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const row of rows) {
    const list = out.get(row.node_id);
    if (list) list.push(row);
    else out.set(row.node_id, [row]);
  }
  return out;
}
