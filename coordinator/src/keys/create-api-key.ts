import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import { isPostgres } from '../db/dialect.js';
import type { Database } from '../db/schema.js';
import { ApiError } from '../errors.js';
import { generateApiKey } from './generate-api-key.js';
import { KEY_STATUS } from './key-status.js';

/**
 * Creates an API key for a user unless they already hold `maxActive` active ones (409
 * key_limit_reached). Count and insert run in one transaction holding the user's row lock
 * (PostgreSQL `FOR UPDATE`; SQLite serializes writers), so concurrent creates cannot pass the
 * limit. Returns the secret — the only time it exists outside the caller's hands.
 */
export async function createApiKey(
  db: Kysely<Database>,
  clock: Clock,
  params: { userId: string; name: string; maxActive: number; limitNano?: bigint | null },
): Promise<{ id: string; key: string; name: string; prefix: string; createdAtMs: number }> {
  const postgres = isPostgres(db);
  return db.transaction().execute(async (trx) => {
    const lock = trx.selectFrom('users').select('id').where('id', '=', params.userId);
    const user = await (postgres ? lock.forUpdate() : lock).executeTakeFirst();
    if (!user) throw new ApiError('invalid_credential', 'The user of this token no longer exists.');
    const { n } = await trx
      .selectFrom('api_keys')
      .select((eb) => eb.fn.countAll<number | string | bigint>().as('n'))
      .where('user_id', '=', params.userId)
      .where('status', '=', KEY_STATUS.active)
      .executeTakeFirstOrThrow();
    if (Number(n) >= params.maxActive) {
      throw new ApiError('key_limit_reached', `A wallet may hold at most ${params.maxActive} active keys.`);
    }
    const { secret, prefix, hash } = generateApiKey();
    const id = `key_${randomUUID().replaceAll('-', '')}`;
    const createdAtMs = clock.now();
    await trx
      .insertInto('api_keys')
      .values({
        id,
        user_id: params.userId,
        name: params.name,
        prefix,
        secret_hash: hash,
        status: KEY_STATUS.active,
        created_at: createdAtMs,
        limit_nano: params.limitNano ?? null,
      })
      .execute();
    return { id, key: secret, name: params.name, prefix, createdAtMs };
  });
}
