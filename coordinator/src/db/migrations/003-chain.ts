import type { Kysely, Migration } from 'kysely';

/** Top-ups, stakes, the reward index, stake events, unbondings, reward payouts, withdrawals. */
export const chain003: Migration & { name: string } = {
  name: '003-chain',
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('topups')
      .addColumn('payment_id', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('source', 'text', (c) => c.notNull())
      .addColumn('amount', 'text', (c) => c.notNull())
      .addColumn('credited_nano', 'bigint', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('balance_nano', 'bigint')
      .addColumn('block_number', 'bigint', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('topups_user_source').on('topups').columns(['user_id', 'source']).execute();
    await db.schema
      .createTable('stakes')
      .addColumn('user_id', 'text', (c) => c.primaryKey())
      .addColumn('address', 'text', (c) => c.notNull().unique())
      .addColumn('quantity_wei', 'text', (c) => c.notNull())
      .addColumn('tier', 'text', (c) => c.notNull())
      .addColumn('multiplier_bps', 'bigint', (c) => c.notNull())
      .addColumn('index_snapshot', 'text', (c) => c.notNull())
      .addColumn('accrued_scaled', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('reward_index')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('value', 'text', (c) => c.notNull())
      .addColumn('at_s', 'bigint', (c) => c.notNull())
      .addColumn('apy_bps', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('stake_events')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('amount_wei', 'text', (c) => c.notNull())
      .addColumn('tx_hash', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('stake_events_user')
      .on('stake_events')
      .columns(['user_id', 'created_at'])
      .execute();
    await db.schema
      .createTable('unbondings')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('amount_wei', 'text', (c) => c.notNull())
      .addColumn('release_at', 'bigint', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('tx_hash', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('unbondings_due')
      .on('unbondings')
      .columns(['status', 'release_at'])
      .execute();
    await db.schema
      .createTable('reward_payouts')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('amount_wei', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('tx_hash', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('withdrawals')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('to_address', 'text', (c) => c.notNull())
      .addColumn('token', 'text', (c) => c.notNull())
      .addColumn('amount', 'text', (c) => c.notNull())
      .addColumn('usd_nano', 'bigint', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('tx_hash', 'text')
      .addColumn('error_code', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('withdrawals_user')
      .on('withdrawals')
      .columns(['user_id', 'created_at'])
      .execute();
  },
};
