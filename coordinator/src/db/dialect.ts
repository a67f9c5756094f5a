import { type Kysely, PostgresAdapter } from 'kysely';
import type { Database } from './schema.js';

/**
 * True when the database is PostgreSQL. Use it only where the two dialects truly differ
 * (row locks: SQLite serializes writers, PostgreSQL needs `for update`).
 */
export function isPostgres(db: Kysely<Database>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}
