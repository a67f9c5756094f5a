import { type Kysely, type Migration, type MigrationProvider, Migrator } from 'kysely';
import { ApiError } from '../errors.js';
import { migrations } from './migrations/index.js';
import type { Database } from './schema.js';

/**
 * Brings the schema up to date by running ./migrations/index.ts in order. Safe to call from many
 * replicas at once: Kysely's migrator takes a lock table (and an advisory lock on PostgreSQL).
 */
export async function migrate(db: Kysely<Database>): Promise<void> {
  const provider: MigrationProvider = {
    getMigrations: async () => Object.fromEntries(migrations.map((m): [string, Migration] => [m.name, m])),
  };
  const { error } = await new Migrator({ db, provider }).migrateToLatest();
  if (error) throw new ApiError('internal_error', 'database migration failed', { cause: error });
}
