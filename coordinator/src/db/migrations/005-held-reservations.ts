import { type Kysely, type Migration, sql } from 'kysely';

/** Finds the holds still open (the stale-hold sweep) without scanning every settled reservation. */
export const heldReservations005: Migration & { name: string } = {
  name: '005-held-reservations',
  async up(db: Kysely<unknown>) {
    await db.schema
      .createIndex('ledger_reservations_held')
      .on('ledger_reservations')
      .column('created_at')
      .where(sql.ref('status'), '=', 'held')
      .execute();
  },
};
