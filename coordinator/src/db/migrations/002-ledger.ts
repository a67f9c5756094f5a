import { type Kysely, type Migration, sql } from 'kysely';

/** Ledger accounts, entries and reservations; usage records (LEDGER+ROUTER). */
export const ledger002: Migration & { name: string } = {
  name: '002-ledger',
  async up(db: Kysely<unknown>) {
    await ledgerUp(db);
    await usageUp(db);
  },
};

/**
 * Creates the ledger tables (SQL that runs on SQLite and PostgreSQL). Money is bigint nanousd;
 * CHECK constraints back the conditional updates: no balance or hold below zero, ever.
 */
async function ledgerUp(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('ledger_accounts')
    .addColumn('account_id', 'text', (c) => c.primaryKey())
    .addColumn('balance', 'bigint', (c) => c.notNull().defaultTo(0).check(sql`balance >= 0`))
    .addColumn('reserved', 'bigint', (c) => c.notNull().defaultTo(0).check(sql`reserved >= 0`))
    .addColumn('spend', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('ledger_entries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('amount', 'bigint', (c) => c.notNull())
    .addColumn('balance_after', 'bigint', (c) => c.notNull())
    .addColumn('ref', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('ledger_entries_kind_ref')
    .on('ledger_entries')
    .columns(['kind', 'ref'])
    .unique()
    .execute();
  await db.schema
    .createIndex('ledger_entries_account')
    .on('ledger_entries')
    .columns(['account_id', 'created_at'])
    .execute();
  await db.schema
    .createTable('ledger_reservations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('amount', 'bigint', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
}

/** Creates usage_records (SQL that runs on SQLite and PostgreSQL). */
async function usageUp(db: Kysely<unknown>): Promise<void> {
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
