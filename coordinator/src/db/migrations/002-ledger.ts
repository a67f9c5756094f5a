import type { Kysely, Migration } from 'kysely';
import { up as ledgerUp } from '../../ledger/migration.js';
import { up as usageUp } from '../../usage/migration.js';

/** Ledger accounts, entries and reservations; usage records (LEDGER+ROUTER). */
export const ledger002: Migration & { name: string } = {
  name: '002-ledger',
  async up(db: Kysely<unknown>) {
    await ledgerUp(db);
    await usageUp(db);
  },
};
