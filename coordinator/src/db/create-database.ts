import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import type { CoordinatorConfig } from '../config.js';
import type { Database } from './schema.js';

/** How long a SQLite writer waits for another's lock before failing. */
export const SQLITE_BUSY_TIMEOUT_MS = 5_000;
export const PG_POOL_MAX = 10;

export type DatabaseTarget =
  | {
      sqlitePath: string;
      /** Ledger writes in a thread of their own (ledger/writer.ts); default true. */
      ledgerThread?: boolean;
    }
  | { pgUrl: string; schema?: string }
  | Pick<CoordinatorConfig, 'dataDir' | 'databaseUrl' | 'databaseSchema'>;

/**
 * Opens the store: PostgreSQL (pg Pool, search_path set to `schema`) when a URL is given, else
 * SQLite (better-sqlite3, WAL, busy_timeout) — from config, <dataDir>/gpumesh.db.
 * Call `db.destroy()` to close it.
 */
export function createDatabase(target: DatabaseTarget): Kysely<Database> {
  if ('sqlitePath' in target) return openSqlite(target.sqlitePath, target.ledgerThread ?? true);
  if ('pgUrl' in target) return openPostgres(target.pgUrl, target.schema);
  if (target.databaseUrl) return openPostgres(target.databaseUrl, target.databaseSchema);
  return openSqlite(path.join(target.dataDir, 'gpumesh.db'), true);
}

function openSqlite(file: string, threadedLedger: boolean): Kysely<Database> {
  if (file !== ':memory:') mkdirSync(path.dirname(file), { recursive: true });
  const database = openSqliteConnection(file);
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database }) });
  sqliteConnections.set(db, database);
  if (file === ':memory:') return db;
  checkpointInBackground(database, file);
  const onClose: (() => Promise<void>)[] = [];
  sqliteFiles.set(db, { file, threadedLedger, onClose });
  // What runs beside this connection on the same file (the ledger writer) closes first.
  const destroy = db.destroy.bind(db);
  db.destroy = async () => {
    await Promise.all(onClose.map((fn) => fn()));
    await destroy();
  };
  return db;
}

/** A connection with the app's settings, nothing started beside it (the ledger writer's own). */
export function openSqliteConnection(file: string): SQLite.Database {
  const database = new SQLite(file);
  database.pragma(`page_size = ${SQLITE_PAGE_SIZE}`);
  database.pragma('journal_mode = WAL');
  database.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
  database.pragma('synchronous = NORMAL');
  database.pragma('foreign_keys = ON');
  cachePreparedStatements(database);
  return database;
}

const sqliteConnections = new WeakMap<Kysely<Database>, SQLite.Database>();

/**
 * The connection under a SQLite database made here or registered with `registerSqliteConnection`;
 * undefined for PostgreSQL. Only for running statements inside a transaction of that database
 * (see runStatementsDirectly): outside one, Kysely's lock is what keeps callers apart.
 */
export function sqliteConnectionOf(db: Kysely<Database>): SQLite.Database | undefined {
  return sqliteConnections.get(db);
}

/** Registers the connection under a Kysely instance made elsewhere (the ledger writer thread's). */
export function registerSqliteConnection(db: Kysely<Database>, connection: SQLite.Database): void {
  sqliteConnections.set(db, connection);
}

const sqliteFiles = new WeakMap<
  Kysely<Database>,
  { file: string; threadedLedger: boolean; onClose: (() => Promise<void>)[] }
>();

/**
 * The file of a database opened by createDatabase on SQLite (not `:memory:`), and a way to close
 * something with it (awaited by `db.destroy()` before the connection closes); undefined for
 * PostgreSQL.
 */
export function sqliteFileOf(
  db: Kysely<Database>,
): { file: string; threadedLedger: boolean; onClose(fn: () => Promise<void>): void } | undefined {
  const found = sqliteFiles.get(db);
  return found && { ...found, onClose: (fn) => found.onClose.push(fn) };
}

/**
 * Page size of a new database (an existing one keeps its own). A paid request touches ~30 pages
 * (the ledger's tables and indexes, the usage row, the key) in two small commits, and every commit
 * writes each touched page whole to the write-ahead log: 113 KB a request at 4 KB pages, 38 KB at
 * 1 KB. Less to write means shorter checkpoint fsyncs, which stall the event loop's own log writes:
 * at 1,000 req/s in bench/gateway-load.ts the added p99 went from ~10 ms to ~3–5 ms, and the
 * maximum throughput up by a quarter. The rows are small (under 200 bytes), so 1 KB pages still
 * hold several each.
 */
export const SQLITE_PAGE_SIZE = 1024;

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

/** How often the background connection copies the write-ahead log into the database file. */
export const SQLITE_CHECKPOINT_INTERVAL_MS = 1_000;

// Runs in a worker thread (plain JavaScript: it is evaluated, not imported). Never throws: a
// failure ends the worker with exit code 1 and the app's connection checkpoints again.
const CHECKPOINTER = `
const { parentPort, workerData } = require('node:worker_threads');
let db;
try {
  db = new (require(workerData.driver))(workerData.file, { fileMustExist: true });
  db.pragma('busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}');
} catch { process.exit(1); }
const checkpoint = db.prepare('pragma wal_checkpoint(PASSIVE)');
const timer = setInterval(() => {
  try { checkpoint.get(); } catch { clearInterval(timer); db.close(); process.exit(1); }
}, workerData.intervalMs);
parentPort.on('message', () => { clearInterval(timer); db.close(); parentPort.close(); });
`;

/**
 * SQLite checkpoints the write-ahead log from the connection that happens to commit when the log
 * passes 1,000 pages: that commit then copies pages and waits for fsync, on the event loop — the
 * largest part of a paid request's time in bench/gateway-load.ts, and its worst latency spikes.
 * Here the app's connection never checkpoints; a second connection in a worker thread does, every
 * second, without blocking writers (PASSIVE). Small and frequent is best here: each checkpoint's
 * fsync still stalls the app's own log writes for a moment, longer the more it flushes
 * (bench/gateway-load.ts at 1,000 req/s: event-loop stalls up to ~30 ms this way; up to ~75 ms
 * checkpointing at 64 MB of log, with the log file cut back after each). Closing the database
 * stops the worker; should the worker fail, the app's connection goes back to checkpointing itself.
 */
function checkpointInBackground(database: SQLite.Database, file: string): void {
  database.pragma('wal_autocheckpoint = 0');
  const worker = new Worker(CHECKPOINTER, {
    eval: true,
    workerData: {
      driver: createRequire(import.meta.url).resolve('better-sqlite3'),
      file,
      intervalMs: SQLITE_CHECKPOINT_INTERVAL_MS,
    },
  });
  worker.unref();
  const fallBack = () => {
    if (database.open) database.pragma('wal_autocheckpoint = 1000');
  };
  worker.on('error', fallBack);
  worker.on('exit', (code) => {
    if (code !== 0) fallBack();
  });
  const close = database.close.bind(database);
  database.close = () => {
    worker.postMessage('close');
    return close();
  };
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
