import type { Kysely, Migration } from 'kysely';

/**
 * Slashing (trust/ orders it, staking/ carries it out): one row per suspension of an owned node,
 * the stake event it produced carries the evidence, and each verification says whether it was a
 * canary or a spot check of live traffic.
 */
export const slashes015: Migration & { name: string } = {
  name: '015-slashes',
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('slashes')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('node_id', 'text', (c) => c.notNull())
      /** The owner's address (lowercase) whose stake is slashed. */
      .addColumn('owner', 'text', (c) => c.notNull())
      .addColumn('fraction_bps', 'integer', (c) => c.notNull())
      /** JSON: the model, its hash and the failed verifications (job ids and statistics). */
      .addColumn('evidence', 'text', (c) => c.notNull())
      /** pending → signing → signed → sent, or none (nothing staked) */
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('amount_wei', 'text')
      .addColumn('stake_event_id', 'text')
      .addColumn('tx_hash', 'text')
      .addColumn('raw_tx', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('slashes_status').on('slashes').columns(['status', 'updated_at']).execute();
    await db.schema.createIndex('slashes_owner').on('slashes').column('owner').execute();
    await db.schema.alterTable('stake_events').addColumn('evidence', 'text').execute();
    await db.schema
      .alterTable('verifications')
      .addColumn('source', 'text', (c) => c.notNull().defaultTo('canary'))
      .execute();
  },
};
