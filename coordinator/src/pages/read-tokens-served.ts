import { type Kysely, sql } from 'kysely';
import { toBigInt } from '../db/bigint.js';
import type { Database } from '../db/schema.js';
import type { Ledger } from '../ledger/ledger.js';
import { readRollCursor } from '../usage/node-usage-rows.js';
import { ROLL_STATE } from '../usage/roll-usage.js';
import type { TokensServed } from './network-stats.js';

/**
 * Tokens served by the whole network so far: the running totals the usage roller keeps
 * (usage/roll-usage.ts) plus the usage rows past its cursor — the sums over every billed usage
 * row, without reading them all on every view. One statement, so totals and cursor agree.
 */
export async function readTokensServed({
  db,
  ledger,
}: {
  db: Kysely<Database>;
  ledger: Pick<Ledger, 'idle'>;
}): Promise<TokensServed> {
  await ledger.idle();
  // `id > hint` lets the planner see how few rows lie past the cursor; the cursor itself decides.
  const hint = await readRollCursor(db);
  const result = await sql<{ prompt: string | number | bigint; completion: string | number | bigint }>`
    select s.prompt_tokens + coalesce(sum(u.prompt_tokens), 0) as prompt,
      s.completion_tokens + coalesce(sum(u.completion_tokens), 0) as completion
    from usage_roll_state s
    left join usage_records u on u.id > ${hint} and u.id > s.cursor_id
    where s.name = ${ROLL_STATE}
    group by s.prompt_tokens, s.completion_tokens`.execute(db);
  const row = result.rows[0];
  return row
    ? { prompt: toBigInt(row.prompt), completion: toBigInt(row.completion) }
    : { prompt: 0n, completion: 0n };
}
