import type { Kysely } from 'kysely';

/** Creates usage_records (SQL that runs on SQLite and PostgreSQL). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('usage_records')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('request_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('key_id', 'text')
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('node_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('prompt_tokens', 'bigint', (c) => c.notNull())
    .addColumn('completion_tokens', 'bigint', (c) => c.notNull())
    .addColumn('cost_nano', 'bigint', (c) => c.notNull())
    .addColumn('provider_nano', 'bigint', (c) => c.notNull())
    .addColumn('fee_nano', 'bigint', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('usage_records_user_day')
    .on('usage_records')
    .columns(['user_id', 'day'])
    .execute();
}
