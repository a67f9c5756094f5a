import type { Kysely, Migration } from 'kysely';

/** The deposit watcher's cursor. */
export const chainCursors004: Migration & { name: string } = {
  name: '004-chain-cursors',
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('chain_cursors')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('block', 'bigint', (c) => c.notNull())
      .execute();
  },
};
