import type { Kysely, Migration } from 'kysely';

/**
 * Whether each request was streamed (1) or not (0): OpenRouter's `streamed` in
 * `GET /api/v1/generation`. Null for rows written before this migration.
 */
export const usageStreamed022: Migration & { name: string } = {
  name: '022-usage-streamed',
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('usage_records').addColumn('streamed', 'integer').execute();
  },
};
