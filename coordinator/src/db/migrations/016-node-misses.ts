import type { Kysely, Migration } from 'kysely';

/** Per node and UTC day, the jobs it missed (no first token in time, died, runtime failure): reputation. */
export const nodeMisses016: Migration & { name: string } = {
  name: '016-node-misses',
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('node_misses')
      .addColumn('node_id', 'text', (c) => c.notNull())
      .addColumn('day', 'text', (c) => c.notNull())
      .addColumn('misses', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('node_misses_pk', ['node_id', 'day'])
      .execute();
  },
};
