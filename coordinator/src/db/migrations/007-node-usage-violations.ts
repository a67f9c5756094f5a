import type { Kysely, Migration } from 'kysely';

/** A count per node of usage reports over the coordinator's bound (pricing/bound-usage.ts). */
export const nodeUsageViolations007: Migration & { name: string } = {
  name: '007-node-usage-violations',
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('node_usage_violations')
      .addColumn('node_id', 'text', (c) => c.primaryKey())
      .addColumn('violations', 'bigint', (c) => c.notNull())
      .addColumn('last_at', 'bigint', (c) => c.notNull())
      .execute();
  },
};
