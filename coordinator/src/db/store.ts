import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import type { CoordinatorConfig } from '../config.js';
import type { Database } from './schema.js';
import { SQLITE_BUSY_TIMEOUT_MS, SqliteConnection } from './sqlite-connection.js';

export { SQLITE_BUSY_TIMEOUT_MS, SQLITE_PAGE_SIZE, SqliteConnection } from './sqlite-connection.js';

export const PG_POOL_MAX = 10;

export type StoreTarget =
  | { sqlitePath: string }
  | { pgUrl: string; schema?: string }
  | Pick<CoordinatorConfig, 'dataDir' | 'databaseUrl' | 'databaseSchema'>;

/**
 * The coordinator's database, opened once (by server.ts, a test, a benchmark) and passed to what
 * needs it: the Kysely handle, and on SQLite the connection under it and its file (the ledger's
 * writer thread opens the same file, ledger/ledger.ts). `close()` stops what runs beside the
 * connection, then closes it.
 */
export class Store {
  #closing: Promise<void> | undefined;
  readonly #checkpointerExited: Promise<unknown> | undefined;

  constructor(
    readonly db: Kysely<Database>,
    /** SQLite only: the connection, and its file (undefined for `:memory:`). */
    readonly sqlite?: { connection: SqliteConnection; file: string | undefined },
    readonly checkpointer?: Worker,
  ) {
    this.#checkpointerExited = checkpointer && new Promise((resolve) => checkpointer.once('exit', resolve));
  }

  /** Closes the database (once; later calls wait for the first). */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      // The worker's own connection closed first: its last checkpoint may still write and remove
      // the log files, and whoever closed the store may next remove its folder. Held by a ref
      // meanwhile (it is unref'd): else a process whose last step is this close would end first.
      this.checkpointer?.ref();
      this.checkpointer?.postMessage('close');
      await this.#checkpointerExited;
      await this.db.destroy();
    })();
    return this.#closing;
  }
}

/**
 * Opens the store: PostgreSQL (pg Pool, search_path set to `schema`) when a URL is given, else
 * SQLite (WAL, busy_timeout) — from config, <dataDir>/gpumesh.db.
 */
export function openStore(target: StoreTarget): Store {
  if ('sqlitePath' in target) return openSqlite(target.sqlitePath);
  if ('pgUrl' in target) return new Store(openPostgres(target.pgUrl, target.schema));
  if (target.databaseUrl) return new Store(openPostgres(target.databaseUrl, target.databaseSchema));
  return openSqlite(path.join(target.dataDir, 'gpumesh.db'));
}

function openSqlite(file: string): Store {
  const memory = file === ':memory:';
  if (!memory) mkdirSync(path.dirname(file), { recursive: true });
  const connection = new SqliteConnection(file);
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: connection }) });
  if (memory) return new Store(db, { connection, file: undefined });
  return new Store(db, { connection, file }, checkpointInBackground(connection, file));
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
 * checkpointing at 64 MB of log, with the log file cut back after each). Closing the store stops
 * the worker; should the worker fail, the app's connection goes back to checkpointing itself.
 */
function checkpointInBackground(connection: SqliteConnection, file: string): Worker {
  connection.pragma('wal_autocheckpoint = 0');
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
    if (connection.open) connection.pragma('wal_autocheckpoint = 1000');
  };
  worker.on('error', fallBack);
  worker.on('exit', (code) => {
    if (code !== 0) fallBack();
  });
  return worker;
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
