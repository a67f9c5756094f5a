import { type Kysely, sql } from 'kysely';
import type { Database } from '../db/schema.js';
import { USAGE_STATUS } from '../db/tables/usage.js';

const DAY_MS = 86_400_000;

/** Jobs, failures, tokens and provider earnings of these nodes: today, last 7 days, total. */
export async function nodeFigures(db: Kysely<Database>, ids: string[], now: number) {
  const today = now - (now % DAY_MS);
  const week = now - 7 * DAY_MS;
  return db
    .selectFrom('usage_records as u')
    .where(sql`lower(u.node_id)`, 'in', ids)
    .select([
      sql<string>`lower(u.node_id)`.as('node_id'),
      sql<string | number>`count(*)`.as('jobs'),
      sql<string | number>`sum(case when u.status = ${USAGE_STATUS.completed} then 0 else 1 end)`.as(
        'failed',
      ),
      sql<string | number>`coalesce(sum(u.prompt_tokens), 0)`.as('prompt'),
      sql<string | number>`coalesce(sum(u.completion_tokens), 0)`.as('completion'),
      sql<
        string | number | bigint
      >`coalesce(sum(case when u.created_at >= ${today} then u.provider_nano else 0 end), 0)`.as('today'),
      sql<
        string | number | bigint
      >`coalesce(sum(case when u.created_at >= ${week} then u.provider_nano else 0 end), 0)`.as('week'),
      sql<string | number | bigint>`coalesce(sum(u.provider_nano), 0)`.as('total'),
    ])
    .groupBy(sql`lower(u.node_id)`)
    .execute();
}
