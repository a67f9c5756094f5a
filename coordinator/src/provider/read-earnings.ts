import { type Kysely, sql } from 'kysely';
import { toBigInt } from '../db/bigint.js';
import type { Database } from '../db/schema.js';
import { nodeUsageRows, readRollCursor } from '../usage/node-usage-rows.js';

export type EarningsBy = 'day' | 'node' | 'model';

export type ReadEarningsParams = {
  /** The owner wallet, lowercase (node_owners). */
  owner: string;
  /** ms, both included. */
  from: number;
  to: number;
  by: EarningsBy;
};

export type EarningsRow = { key: string; jobs: number; earnedNano: bigint };

const COLUMN = { day: 'day', node: 'node_id', model: 'model' } as const;

/**
 * An owner's nodes' jobs and provider earnings in [from, to], grouped by UTC day, node or model,
 * in key order: from the usage rollups (whole days and hours) and the raw rows at the window's
 * edges and past the rollups' cursor (usage/node-usage-rows.ts) — the same sums as over the raw
 * rows, without reading every row of the window.
 */
export async function readEarnings(db: Kysely<Database>, p: ReadEarningsParams): Promise<EarningsRow[]> {
  const rows = nodeUsageRows({
    scope: { owner: p.owner },
    from: p.from,
    to: p.to + 1,
    cursorHint: await readRollCursor(db),
  });
  const key = sql.ref(`x.${COLUMN[p.by]}`);
  const result = await sql<{ key: string; jobs: string | number; earned: string | number | bigint }>`
    select ${key} as key, sum(x.requests) as jobs, coalesce(sum(x.provider_nano), 0) as earned
    from ${rows} as x group by ${key} order by ${key}`.execute(db);
  return result.rows.map((r) => ({ key: r.key, jobs: Number(r.jobs), earnedNano: toBigInt(r.earned) }));
}
