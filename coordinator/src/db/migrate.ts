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
  const migrator = new Migrator({ db, provider, ...(migrationTableSchema ? { migrationTableSchema } : {}) });
  for (let attempt = 1; ; attempt++) {
    const { error } = await migrator.migrateToLatest();
    if (!error) return;
    // Kysely looks for its tables by listing every schema's: another schema dropped meanwhile (tests
    // sharing a database) fails that listing with invalid_schema_name. Nothing ran; try again.
    if (attempt < MIGRATE_ATTEMPTS && (error as { code?: unknown }).code === PG_INVALID_SCHEMA_NAME) continue;
    throw new ApiError('internal_error', 'database migration failed', { cause: error });
  }
}

const MIGRATE_ATTEMPTS = 3;
const PG_INVALID_SCHEMA_NAME = '3F000';
