import { type Kysely, sql } from 'kysely';
import type { Database } from '../db/schema.js';

/** Counts one usage report over its bound against `nodeId` (one upsert; rare, off the hot path). */
export async function recordUsageViolation(
  db: Kysely<Database>,
  { nodeId, now }: { nodeId: string; now: number },
): Promise<void> {
  await db
    .insertInto('node_usage_violations')
    .values({ node_id: nodeId, violations: 1, last_at: now })
    .onConflict((oc) =>
      oc.column('node_id').doUpdateSet({
        violations: sql`node_usage_violations.violations + 1`,
        last_at: now,
      }),
    )
    .execute();
}
