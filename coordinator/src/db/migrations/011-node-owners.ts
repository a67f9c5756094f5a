import type { Kysely, Migration } from 'kysely';

/**
 * Which wallet owns each node: recorded when a node proves its owner at connect, or when the owner
 * links it from the dashboard (signing the node's owner-proof text). Earnings follow the link.
 */
export const nodeOwners011: Migration & { name: string } = {
  name: '011-node-owners',
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('node_owners')
      .addColumn('node_id', 'text', (c) => c.primaryKey())
      .addColumn('owner', 'text', (c) => c.notNull())
      .addColumn('linked_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('node_owners_owner').on('node_owners').column('owner').execute();
  },
};
