import { type Kysely, sql } from 'kysely';
import { toBigInt } from '../db/bigint.js';
import type { Database } from '../db/schema.js';
import { readRollCursor } from './node-usage-rows.js';
import { ROLL_STATE } from './roll-usage.js';

/** What one API key spent today, this week and this month (UTC), in nanousd. */
export type KeyUsageByPeriod = { dailyNano: bigint; weeklyNano: bigint; monthlyNano: bigint };

/**
 * One key's spend per calendar period, as OpenRouter's `/api/v1/key` reports it: the UTC day, the
 * UTC week from Monday, the UTC month. Sums the user's daily rollup (usage_user_days, roll-usage.ts)
 * for the key and the usage rows past its cursor, in one statement, as summarizeUsage does — at most
 * one rollup row per day, model and kind since the earlier of the week's and the month's start.
 * The caller waits for the ledger first (the key's newest requests are then in the rows).
 */
export async function keyUsageByPeriod(
  db: Kysely<Database>,
  params: { userId: string; keyId: string; now: number },
): Promise<KeyUsageByPeriod> {
  const today = new Date(params.now).toISOString().slice(0, 10);
  const date = new Date(`${today}T00:00:00Z`);
  const sinceMonday = (date.getUTCDay() + 6) % 7;
  const week = new Date(date.getTime() - sinceMonday * 86_400_000).toISOString().slice(0, 10);
  const month = `${today.slice(0, 7)}-01`;
  const from = week < month ? week : month;
  const cursorHint = await readRollCursor(db);
  const result = await sql<{ day: string; cost_nano: string | number | bigint }>`
    select day, cost_nano from usage_user_days
    where user_id = ${params.userId} and key_id = ${params.keyId} and day >= ${from}
    union all
    select u.day, u.cost_nano from usage_records u
    where u.id > ${cursorHint}
      and u.id > (select cursor_id from usage_roll_state where name = ${ROLL_STATE})
      and u.user_id = ${params.userId} and u.key_id = ${params.keyId} and u.day >= ${from}`.execute(db);
  const out: KeyUsageByPeriod = { dailyNano: 0n, weeklyNano: 0n, monthlyNano: 0n };
  for (const row of result.rows) {
    const cost = toBigInt(row.cost_nano);
    if (row.day === today) out.dailyNano += cost;
    if (row.day >= week) out.weeklyNano += cost;
    if (row.day >= month) out.monthlyNano += cost;
  }
  return out;
}
