import type { Kysely, Migration } from 'kysely';

/** The per-wallet lease every replica takes before a check-then-send on a service wallet. */
export const walletLocks006: Migration & { name: string } = {
  name: '006-wallet-locks',
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('wallet_locks')
      .addColumn('address', 'text', (c) => c.primaryKey())
      .addColumn('holder', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
  },
};
