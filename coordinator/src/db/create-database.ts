import { mkdirSync } from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import type { CoordinatorConfig } from '../config.js';
import type { Database } from './schema.js';

/** How long a SQLite writer waits for another's lock before failing. */
export const SQLITE_BUSY_TIMEOUT_MS = 5_000;
export const PG_POOL_MAX = 10;

export type DatabaseTarget =
  | { sqlitePath: string }
  | { pgUrl: string; schema?: string }
  | Pick<CoordinatorConfig, 'dataDir' | 'databaseUrl' | 'databaseSchema'>;

/**
 * Opens the store: PostgreSQL (pg Pool, search_path set to `schema`) when a URL is given, else
 * SQLite (better-sqlite3, WAL, busy_timeout) — from config, <dataDir>/gpumesh.db.
 * Call `db.destroy()` to close it.
 */
export function createDatabase(target: DatabaseTarget): Kysely<Database> {
  if ('sqlitePath' in target) return openSqlite(target.sqlitePath);
  if ('pgUrl' in target) return openPostgres(target.pgUrl, target.schema);
  if (target.databaseUrl) return openPostgres(target.databaseUrl, target.databaseSchema);
  return openSqlite(path.join(target.dataDir, 'gpumesh.db'));
}

function openSqlite(file: string): Kysely<Database> {
  if (file !== ':memory:') mkdirSync(path.dirname(file), { recursive: true });
  const database = new SQLite(file);
  database.pragma('journal_mode = WAL');
  database.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
  database.pragma('synchronous = NORMAL');
  database.pragma('foreign_keys = ON');
  cachePreparedStatements(database);
  return new Kysely<Database>({ dialect: new SqliteDialect({ database }) });
}

/** Distinct SQL texts whose prepared statements are kept (the app has a few dozen). */
export const SQLITE_STATEMENT_CACHE_SIZE = 512;

/**
 * Kysely prepares every query anew; preparing costs more than running our short statements (it
 * was ~15% of a paid request's CPU in bench/gateway-load.ts). better-sqlite3 runs one statement at
 * a time, synchronously, so a statement can be reused safely: cache them by SQL text.
 */
function cachePreparedStatements(database: SQLite.Database): void {
  const prepare = database.prepare.bind(database);
  const cache = new Map<string, SQLite.Statement>();
  database.prepare = ((source: string) => {
    let statement = cache.get(source);
    if (!statement) {
      statement = prepare(source);
      if (cache.size >= SQLITE_STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
      cache.set(source, statement);
    }
    return statement;
  }) as typeof database.prepare;
}

function openPostgres(url: string, schema: string | undefined): Kysely<Database> {
  if (schema !== undefined && !/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(schema)) {
    throw new TypeError('invalid PostgreSQL schema name');
  }
  const pool = new pg.Pool({
    connectionString: url,
    max: PG_POOL_MAX,
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
  });
  // An idle client's error (server restart) must not crash the process; the next query reports it.
  pool.on('error', () => {});
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}
