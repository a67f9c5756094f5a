import type { Kysely, Migration } from 'kysely';

/**
 * The activity log (`GET /api/router/activity`) pages through one user's requests newest first by
 * (created_at, id): this index serves that order, a date range and the cursor without a sort.
 */
export const activityIndex009: Migration & { name: string } = {
  name: '009-activity-index',
  async up(db: Kysely<unknown>) {
    await db.schema
      .createIndex('usage_records_user_created')
      .on('usage_records')
      .columns(['user_id', 'created_at', 'id'])
      .execute();
  },
};
