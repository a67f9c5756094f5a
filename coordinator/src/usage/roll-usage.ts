import { type Kysely, sql } from 'kysely';
import { toBigInt } from '../db/bigint.js';
import type { Database } from '../db/schema.js';

/** How long after its creation a usage row is folded: a settlement commits well within it. */
export const ROLL_LAG_MS = 60_000;
/** Usage rows folded per transaction (a backlog is folded in several). */
export const ROLL_BATCH_ROWS = 50_000;
/** The rollups' state row. */
export const ROLL_STATE = 'usage';
export const HOUR_MS = 3_600_000;

export type RollUsageParams = {
  /** Milliseconds since the epoch: rows created before `now - lagMs` are folded. */
  now: number;
  lagMs?: number;
  batchRows?: number;
};

export type RollUsageResult = {
  /** Usage rows folded in by this call. */
  folded: number;
  /** False when the batch was full: call again for the rest. */
  caughtUp: boolean;
};

/**
 * The first id at or after `ms` would sort above this: usage ids are time-ordered UUIDs whose
 * first 12 hex digits are their creation ms (db/ids.ts), so `id < idFloor(ms)` is "created
 * before ms", in PostgreSQL's C collation and SQLite's binary order alike.
 */
export function idFloor(ms: number): string {
  const time = Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0').slice(-12);
  return `${time.slice(0, 8)}-${time.slice(8)}`;
}

/**
 * Folds the usage rows past the cursor and created before `now - lagMs` (at most `batchRows`)
 * into the rollups (usage_user_days, usage_node_hours, usage_node_days, the running totals) and moves the cursor
 * to the last of them — all in one transaction, so each row is folded once. Replicas may run it at
 * the same time: the state row is written first, which takes its row lock on PostgreSQL (and the
 * write lock on SQLite), so one folds while the others wait and then see the moved cursor.
 *
 * The lag is the one assumption: a row committed more than `lagMs` after its id's time, below a
 * cursor that moved meanwhile, would never be folded (nor read raw). Settlements commit within
 * a group commit of their creation, far inside a minute.
 */
export async function rollUsage(db: Kysely<Database>, params: RollUsageParams): Promise<RollUsageResult> {
  const lagMs = params.lagMs ?? ROLL_LAG_MS;
  const batchRows = params.batchRows ?? ROLL_BATCH_ROWS;
  const ceiling = idFloor(params.now - lagMs);
  return db.transaction().execute(async (trx) => {
    await trx
      .updateTable('usage_roll_state')
      .set({ updated_at: params.now })
      .where('name', '=', ROLL_STATE)
      .execute();
    const { cursor_id: cursor } = await trx
      .selectFrom('usage_roll_state')
      .select('cursor_id')
      .where('name', '=', ROLL_STATE)
      .executeTakeFirstOrThrow();
    const pending = trx.selectFrom('usage_records').where('id', '>', cursor).where('id', '<', ceiling);
    const full = await pending
      .select('id')
      .orderBy('id')
      .offset(batchRows - 1)
      .limit(1)
      .executeTakeFirst();
    const upTo =
      full?.id ?? (await pending.select((eb) => eb.fn.max('id').as('id')).executeTakeFirst())?.id ?? null;
    if (upTo === null) return { folded: 0, caughtUp: true };
    const totals = await foldBatch(trx, cursor, upTo);
    await sql`
      update usage_roll_state set cursor_id = ${upTo}, requests = requests + ${totals.requests},
        prompt_tokens = prompt_tokens + ${totals.prompt}, completion_tokens = completion_tokens + ${totals.completion}
      where name = ${ROLL_STATE}`.execute(trx);
    return { folded: totals.requests, caughtUp: full === undefined };
  });
}

/**
 * Adds the rows with cursor < id ≤ upTo to the rollups; returns their totals. Each fold inserts
 * in its rollup's primary-key order (GROUP BY and ORDER BY list the key): a backlog of millions of
 * rows then grows the B-tree at its edge; in hash order it wrote a page per row all over an index
 * larger than the buffer cache.
 */
async function foldBatch(
  trx: Kysely<Database>,
  cursor: string,
  upTo: string,
): Promise<{ requests: number; prompt: bigint; completion: bigint }> {
  await sql`
    insert into usage_user_days (day, user_id, key_id, model, kind, requests, prompt_tokens,
      completion_tokens, cost_nano)
    select day, user_id, coalesce(key_id, ''), model, kind, count(*), sum(prompt_tokens),
      sum(completion_tokens), sum(cost_nano)
    from usage_records where id > ${cursor} and id <= ${upTo}
    group by user_id, day, coalesce(key_id, ''), model, kind
    order by user_id, day, coalesce(key_id, ''), model, kind
    on conflict (user_id, day, key_id, model, kind) do update set
      requests = usage_user_days.requests + excluded.requests,
      prompt_tokens = usage_user_days.prompt_tokens + excluded.prompt_tokens,
      completion_tokens = usage_user_days.completion_tokens + excluded.completion_tokens,
      cost_nano = usage_user_days.cost_nano + excluded.cost_nano`.execute(trx);
  const hour = sql`created_at - created_at % ${sql.lit(HOUR_MS)}`;
  for (const bucket of [
    {
      table: 'usage_node_hours',
      columns: sql`hour, node_id, model, day`,
      select: sql`${hour}, node_id, model, min(day)`,
      group: sql`node_id, ${hour}, model`,
      key: sql`node_id, hour, model`,
    },
    {
      table: 'usage_node_days',
      columns: sql`day, node_id, model`,
      select: sql`day, node_id, model`,
      group: sql`node_id, day, model`,
      key: sql`node_id, day, model`,
    },
  ]) {
    const t = sql.table(bucket.table);
    await sql`
      insert into ${t} (${bucket.columns}, requests, completed, node_failed, prompt_tokens,
        completion_tokens, cost_nano, provider_nano, fee_nano)
      select ${bucket.select}, count(*),
        sum(case when status = 'completed' then 1 else 0 end),
        sum(case when status = 'node_failed' then 1 else 0 end),
        sum(prompt_tokens), sum(completion_tokens), sum(cost_nano), sum(provider_nano), sum(fee_nano)
      from usage_records where id > ${cursor} and id <= ${upTo}
      group by ${bucket.group}
      order by ${bucket.group}
      on conflict (${bucket.key}) do update set
        requests = ${t}.requests + excluded.requests,
        completed = ${t}.completed + excluded.completed,
        node_failed = ${t}.node_failed + excluded.node_failed,
        prompt_tokens = ${t}.prompt_tokens + excluded.prompt_tokens,
        completion_tokens = ${t}.completion_tokens + excluded.completion_tokens,
        cost_nano = ${t}.cost_nano + excluded.cost_nano,
        provider_nano = ${t}.provider_nano + excluded.provider_nano,
        fee_nano = ${t}.fee_nano + excluded.fee_nano`.execute(trx);
  }
  const row = await trx
    .selectFrom('usage_records')
    .where('id', '>', cursor)
    .where('id', '<=', upTo)
    .select((eb) => [
      eb.fn.countAll<string | number>().as('n'),
      eb.fn.coalesce(eb.fn.sum<string | number | bigint>('prompt_tokens'), eb.lit(0)).as('prompt'),
      eb.fn.coalesce(eb.fn.sum<string | number | bigint>('completion_tokens'), eb.lit(0)).as('completion'),
    ])
    .executeTakeFirstOrThrow();
  return { requests: Number(row.n), prompt: toBigInt(row.prompt), completion: toBigInt(row.completion) };
}
