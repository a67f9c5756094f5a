import { type Kysely, type Migration, type MigrationProvider, Migrator, sql } from 'kysely';
import { ApiError } from '../errors.js';
import { isPostgres } from './dialect.js';
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
  // On PostgreSQL the migrator must look for its bookkeeping tables in OUR schema (search_path),
  // or it takes another schema's tables for ours when several share the database.
  const migrationTableSchema = isPostgres(db)
    ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema
    : undefined;
  const { error } = await new Migrator({
    db,
    provider,
    ...(migrationTableSchema ? { migrationTableSchema } : {}),
  }).migrateToLatest();
  if (error) throw new ApiError('internal_error', 'database migration failed', { cause: error });
}
