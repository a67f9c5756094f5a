import type { Kysely } from 'kysely';
import { toBigInt } from '../db/bigint.js';
import type { Database } from '../db/schema.js';
import type { Ledger } from '../ledger/ledger.js';
import type { TokensServed } from './network-stats.js';

/** Tokens served by the whole network so far: the sums over every billed usage row. */
export async function readTokensServed({
  db,
  ledger,
}: {
  db: Kysely<Database>;
  ledger: Pick<Ledger, 'idle'>;
}): Promise<TokensServed> {
  await ledger.idle();
  const row = await db
    .selectFrom('usage_records')
    .select((eb) => [
      eb.fn.coalesce(eb.fn.sum<string | number | bigint>('prompt_tokens'), eb.lit(0)).as('prompt'),
      eb.fn.coalesce(eb.fn.sum<string | number | bigint>('completion_tokens'), eb.lit(0)).as('completion'),
    ])
    .executeTakeFirstOrThrow();
  return { prompt: toBigInt(row.prompt), completion: toBigInt(row.completion) };
}
