import { type Kysely, sql } from 'kysely';
import type { Database } from '../db/schema.js';
import { USAGE_STATUS } from '../db/tables/usage.js';
import { tokensPerSecond } from '../usage/tokens-per-second.js';

/** Median time to first token and tokens/s of each node's completed jobs since `since`. */
export async function nodeMedians(db: Kysely<Database>, ids: string[], since: number) {
  const out = new Map<string, { ttftMs: number | null; tokensPerSecond: number | null }>();
  if (ids.length === 0) return out;
  const rows = await db
    .selectFrom('usage_records')
    .select([sql<string>`lower(node_id)`.as('node_id'), 'ttft_ms', 'latency_ms', 'completion_tokens'])
    .where(sql`lower(node_id)`, 'in', ids)
    .where('created_at', '>=', since)
    .where('status', '=', USAGE_STATUS.completed)
    .orderBy('created_at', 'desc')
    .limit(20_000)
    .execute();
  const samples = new Map<string, { ttft: number[]; tps: number[] }>();
  for (const r of rows) {
    const s = samples.get(r.node_id) ?? { ttft: [], tps: [] };
    if (r.ttft_ms !== null) s.ttft.push(Number(r.ttft_ms));
    const tps = tokensPerSecond(
      Number(r.completion_tokens),
      r.latency_ms === null ? null : Number(r.latency_ms),
    );
    if (tps !== null && Number(r.completion_tokens) > 0) s.tps.push(tps);
    samples.set(r.node_id, s);
  }
  for (const [id, s] of samples) {
    const ttft = median(s.ttft);
    out.set(id, { ttftMs: ttft === null ? null : Math.round(ttft), tokensPerSecond: median(s.tps) });
  }
  return out;
}

function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
