import type { Kysely, Migration } from 'kysely';

/**
 * What `GET /api/v1/generation` reports about one request: its latency and finish reason, found by
 * its id; and an optional credit limit per API key (`GET /api/v1/key`, 402 key_credit_limit_reached).
 */
export const generationsAndKeyLimits008: Migration & { name: string } = {
  name: '008-generations-and-key-limits',
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('usage_records').addColumn('latency_ms', 'bigint').execute();
    await db.schema.alterTable('usage_records').addColumn('finish_reason', 'text').execute();
    await db.schema.createIndex('usage_records_request').on('usage_records').column('request_id').execute();
    await db.schema.alterTable('api_keys').addColumn('limit_nano', 'bigint').execute();
  },
};
