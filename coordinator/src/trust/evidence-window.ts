import type { Transaction } from 'kysely';
import { toBigInt } from '../db/bigint.js';
import type { Database } from '../db/schema.js';

/** The evidence window when no failed verification dates it: 24 hours. */
export const CONVICTION_WINDOW_MS = 24 * 60 * 60_000;

/**
 * Where a conviction's evidence window opens (convict.ts `sinceMs`): at the oldest of the node's
 * `failed` latest failed verifications — its failures since it was last trusted — or
 * `now − CONVICTION_WINDOW_MS` when there is none. A stopgap until the sequential test states its
 * own window.
 */
export async function evidenceWindowStart(
  trx: Transaction<Database>,
  q: { nodeId: string; failed: number; now: number },
): Promise<number> {
  const failures = await trx
    .selectFrom('verifications')
    .select('created_at')
    .where('node_id', '=', q.nodeId.toLowerCase())
    .where('passed', '=', 0)
    .orderBy('created_at', 'desc')
    .limit(Math.max(1, q.failed))
    .execute();
  const oldest = failures.at(-1)?.created_at;
  return oldest === undefined ? q.now - CONVICTION_WINDOW_MS : Number(toBigInt(oldest));
}
