import type { Kysely, Migration } from 'kysely';

/**
 * Which replica holds each open reservation, and each replica's lease: a replica whose lease ran
 * out is dead, and the survivors release its holds (ledger/replica-leases.ts).
 */
export const replicaLeases010: Migration & { name: string } = {
  name: '010-replica-leases',
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('ledger_reservations').addColumn('holder', 'text').execute();
    await db.schema
      .createTable('replica_leases')
      .addColumn('replica_id', 'text', (c) => c.primaryKey())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
  },
};
