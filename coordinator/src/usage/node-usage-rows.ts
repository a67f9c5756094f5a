import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { Database } from '../db/schema.js';
import { HOUR_MS, ROLL_STATE } from './roll-usage.js';

const DAY_MS = 86_400_000;

/** Whose usage: these node ids (as the usage rows spell them), or every node an owner linked. */
export type NodeScope = { readonly ids: readonly string[] } | { readonly owner: string };

/** One row of the union nodeUsageRows builds: raw usage rows count 1 request each. */
export type NodeUsageRow = {
  node_id: string;
  model: string;
  day: string;
  requests: string | number | bigint;
  completed: string | number | bigint;
  node_failed: string | number | bigint;
  prompt_tokens: string | number | bigint;
  completion_tokens: string | number | bigint;
  provider_nano: string | number | bigint;
};

/** [from, to) in ms; `to` null: no end. */
type Range = readonly [number, number | null];

/**
 * How a window [from, to) splits over the rollups: whole UTC days from usage_node_days, whole
 * hours at their edges from usage_node_hours, the partial hours at the window's ends from the raw
 * rows; `rolled` is the span the rollups cover (their rows past the cursor are read raw).
 */
export function windowParts(from: number, to: number | null) {
  const h1 = Math.ceil(from / HOUR_MS) * HOUR_MS;
  const h2 = to === null ? null : Math.floor(to / HOUR_MS) * HOUR_MS;
  if (h2 !== null && h1 >= h2) return { raw: [[from, to]] as Range[], hours: [], days: null, rolled: null };
  const d1 = Math.ceil(from / DAY_MS) * DAY_MS;
  const d2 = h2 === null ? null : Math.floor(h2 / DAY_MS) * DAY_MS;
  const raw: Range[] = [[from, h1]];
  if (h2 !== null && to !== null) raw.push([h2, to]);
  const wholeDays = d2 === null || d1 < d2;
  const hours: Range[] = wholeDays ? [[h1, d1]] : [[h1, h2]];
  if (wholeDays && d2 !== null) hours.push([d2, h2]);
  const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  return {
    raw: raw.filter(([a, b]) => b === null || a < b),
    hours: hours.filter(([a, b]) => b === null || a < b),
    days: wholeDays ? ([dayOf(d1), d2 === null ? null : dayOf(d2)] as const) : null,
    rolled: [h1, h2] as Range,
  };
}

/**
 * Some nodes' usage in [from, to) (`to` null: no end) as one SQL subquery over the rollups and the
 * raw rows, exactly what a query of usage_records alone would sum: whole days and hours from the
 * rollups up to the cursor, the rows after the cursor and the partial hours at the edges raw. One
 * statement, so the rollups and the cursor it reads are of one snapshot. `cursorHint` (a cursor
 * read before) lets the planner see how few rows lie past the cursor; rows past the real cursor are
 * what count.
 */
export function nodeUsageRows(p: {
  scope: NodeScope;
  from: number;
  to: number | null;
  cursorHint: string;
}): RawBuilder<NodeUsageRow> {
  const parts = windowParts(p.from, p.to);
  const rolledScope = (column: RawBuilder<unknown>) =>
    'owner' in p.scope
      ? sql`lower(${column}) in (select node_id from node_owners where owner = ${p.scope.owner})`
      : sql`${column} in (${sql.join(p.scope.ids)})`;
  // Raw rows: matched through the lower(node_id) index (migration 018), as the rows spell them.
  const rawScope =
    'owner' in p.scope
      ? sql`lower(u.node_id) in (select node_id from node_owners where owner = ${p.scope.owner})`
      : sql`lower(u.node_id) in (${sql.join(p.scope.ids.map((id) => id.toLowerCase()))}) and u.node_id in (${sql.join(p.scope.ids)})`;
  const rawColumns = sql`u.node_id, u.model, u.day, 1 as requests,
    case when u.status = 'completed' then 1 else 0 end as completed,
    case when u.status = 'node_failed' then 1 else 0 end as node_failed,
    u.prompt_tokens, u.completion_tokens, u.provider_nano`;
  const rollupColumns = sql`node_id, model, day, requests, completed, node_failed, prompt_tokens,
    completion_tokens, provider_nano`;
  const within = (column: RawBuilder<unknown>, [a, b]: Range) =>
    b === null ? sql`${column} >= ${a}` : sql`${column} >= ${a} and ${column} < ${b}`;
  const branches: RawBuilder<unknown>[] = parts.raw.map(
    (range) =>
      sql`select ${rawColumns} from usage_records u where ${rawScope} and ${within(sql.ref('u.created_at'), range)}`,
  );
  if (parts.rolled) {
    const cursor = sql`(select cursor_id from usage_roll_state where name = ${ROLL_STATE})`;
    branches.push(sql`select ${rawColumns} from usage_records u
      where u.id > ${p.cursorHint} and u.id > ${cursor} and ${rawScope} and ${within(sql.ref('u.created_at'), parts.rolled)}`);
    for (const range of parts.hours) {
      branches.push(sql`select ${rollupColumns} from usage_node_hours
        where ${rolledScope(sql.ref('node_id'))} and ${within(sql.ref('hour'), range)}`);
    }
    if (parts.days) {
      const [d1, d2] = parts.days;
      branches.push(sql`select ${rollupColumns} from usage_node_days
        where ${rolledScope(sql.ref('node_id'))} and day >= ${d1}${d2 === null ? sql`` : sql` and day < ${d2}`}`);
    }
  }
  return sql<NodeUsageRow>`(${sql.join(branches, sql` union all `)})`;
}

/** The rollups' cursor now (a hint for nodeUsageRows and the other readers' plans). */
export async function readRollCursor(db: Kysely<Database>): Promise<string> {
  const row = await db
    .selectFrom('usage_roll_state')
    .select('cursor_id')
    .where('name', '=', ROLL_STATE)
    .executeTakeFirst();
  return row?.cursor_id ?? '';
}
