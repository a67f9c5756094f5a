import { type Kysely, sql } from 'kysely';
import type { Database } from '../db/schema.js';

/** Counts one missed job against `nodeId` on the UTC day of `now` (one upsert; off the hot path). */
export async function recordNodeMiss(
  db: Kysely<Database>,
  { nodeId, now }: { nodeId: string; now: number },
): Promise<void> {
  const day = new Date(now).toISOString().slice(0, 10);
  await db
    .insertInto('node_misses')
    .values({ node_id: nodeId.toLowerCase(), day, misses: 1 })
    .onConflict((oc) => oc.columns(['node_id', 'day']).doUpdateSet({ misses: sql`node_misses.misses + 1` }))
    .execute();
}
