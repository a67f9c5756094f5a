import type { Kysely, Migration } from 'kysely';

/** Payouts of node owners' earnings from the treasury, on chain (provider/payout.ts). */
export const providerPayouts012: Migration & { name: string } = {
  name: '012-provider-payouts',
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('provider_payouts')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('owner', 'text', (c) => c.notNull())
      .addColumn('idempotency_key', 'text')
      .addColumn('token', 'text', (c) => c.notNull())
      .addColumn('amount', 'text', (c) => c.notNull())
      .addColumn('usd_nano', 'bigint', (c) => c.notNull())
      .addColumn('to_address', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('tx_hash', 'text')
      .addColumn('raw_tx', 'text')
      .addColumn('error_code', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('provider_payouts_owner_key')
      .on('provider_payouts')
      .columns(['owner', 'idempotency_key'])
      .unique()
      .execute();
    await db.schema
      .createIndex('provider_payouts_owner_created')
      .on('provider_payouts')
      .columns(['owner', 'created_at'])
      .execute();
    await db.schema
      .createIndex('provider_payouts_status')
      .on('provider_payouts')
      .columns(['status', 'updated_at'])
      .execute();
  },
};
