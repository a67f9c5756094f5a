import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import type { Database } from '../db/schema.js';
import { nodeUsageRows, readRollCursor } from './node-usage-rows.js';

export type NodeJobs = { completed: number; failed: number };

/**
 * Each node's billed jobs since `since` (ms), completed and failed on the node, keyed by node id
 * as given (the ids are matched as the usage rows spell them): reputation's reliability counts,
 * from the usage rollups and the raw rows the rollups do not cover yet (node-usage-rows.ts).
 */
export async function readNodeJobs(
  db: Kysely<Database>,
  nodeIds: readonly string[],
  since: number,
): Promise<Map<string, NodeJobs>> {
  const out = new Map<string, NodeJobs>();
  if (nodeIds.length === 0) return out;
  const rows = nodeUsageRows({
    scope: { ids: nodeIds },
    from: since,
    to: null,
    cursorHint: await readRollCursor(db),
  });
  const result = await sql<{
    node_id: string;
    completed: string | number | null;
    failed: string | number | null;
  }>`
    select x.node_id, sum(x.completed) as completed, sum(x.node_failed) as failed
    from ${rows} as x group by x.node_id`.execute(db);
  for (const r of result.rows)
    out.set(r.node_id, { completed: Number(r.completed ?? 0), failed: Number(r.failed ?? 0) });
  return out;
}
