import type { Kysely, Migration } from 'kysely';

/**
 * Uptime and first-token time, for owners and the /network page: each node session a replica
 * held (hub/node-sessions.ts), and each request's time to its first token.
 */
export const nodeSessionsAndTtft013: Migration & { name: string } = {
  name: '013-node-sessions-and-ttft',
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('node_sessions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('node_id', 'text', (c) => c.notNull())
      .addColumn('replica', 'text', (c) => c.notNull())
      .addColumn('started_at', 'bigint', (c) => c.notNull())
      .addColumn('last_seen_at', 'bigint', (c) => c.notNull())
      .addColumn('ended_at', 'bigint')
      .execute();
    await db.schema
      .createIndex('node_sessions_node')
      .on('node_sessions')
      .columns(['node_id', 'started_at'])
      .execute();
    await db.schema.alterTable('usage_records').addColumn('ttft_ms', 'bigint').execute();
  },
};
