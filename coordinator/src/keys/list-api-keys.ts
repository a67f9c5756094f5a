import type { Kysely } from 'kysely';
import { toBigInt, toBigIntOrNull, toMillis } from '../db/bigint.js';
import type { Database } from '../db/schema.js';
import type { Ledger } from '../ledger/ledger.js';
import type { KeyStatus } from './key-status.js';

export type ApiKeyInfo = {
  id: string;
  name: string;
  prefix: string;
  createdAtMs: number;
  lastUsedAtMs: number | null;
  status: KeyStatus;
  spendNano: bigint;
  /** The key's credit limit, nanousd; null when none. */
  limitNano: bigint | null;
};

/** A user's keys, newest first (never the secret or its hash); spend includes queued settlements. */
export async function listApiKeys(
  { db, ledger }: { db: Kysely<Database>; ledger: Ledger },
  userId: string,
): Promise<ApiKeyInfo[]> {
  await ledger.idle();
  const rows = await db
    .selectFrom('api_keys')
    .select(['id', 'name', 'prefix', 'created_at', 'last_used_at', 'status', 'spend_nano', 'limit_nano'])
    .where('user_id', '=', userId)
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .execute();
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    prefix: r.prefix,
    createdAtMs: toMillis(r.created_at),
    lastUsedAtMs: r.last_used_at === null ? null : toMillis(r.last_used_at),
    status: r.status as KeyStatus,
    spendNano: toBigInt(r.spend_nano),
    limitNano: toBigIntOrNull(r.limit_nano),
  }));
}
