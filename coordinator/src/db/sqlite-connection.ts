import SQLite from 'better-sqlite3';
import type { SqliteDatabase } from 'kysely';

/** How long a SQLite writer waits for another's lock before failing. */
export const SQLITE_BUSY_TIMEOUT_MS = 5_000;

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

const BEGIN_DEFERRED = 'begin';
const BEGIN_IMMEDIATE = 'begin immediate';

/** Distinct SQL texts whose prepared statements are kept (the app has a few dozen). */
export const SQLITE_STATEMENT_CACHE_SIZE = 512;

/**
 * A better-sqlite3 connection with the app's settings, as Kysely's SqliteDialect takes it, that
 * keeps its prepared statements. Kysely prepares every query anew, and preparing costs more than
 * running our short statements (~15% of a paid request's CPU in bench/gateway-load.ts).
 * better-sqlite3 runs one statement at a time, synchronously, so a statement can be reused safely:
 * they are cached by SQL text. Statements run straight on it (db/statement.ts) share the cache.
 */
export class SqliteConnection implements SqliteDatabase {
  readonly raw: SQLite.Database;
  readonly #statements = new Map<string, SQLite.Statement>();

  constructor(file: string) {
    this.raw = new SQLite(file);
    this.raw.pragma(`page_size = ${SQLITE_PAGE_SIZE}`);
    this.raw.pragma('journal_mode = WAL');
    this.raw.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
    this.raw.pragma('synchronous = NORMAL');
    this.raw.pragma('foreign_keys = ON');
  }

  prepare(text: string): SQLite.Statement {
    // Kysely opens a transaction with a deferred `begin`: it reads, then asks for the write lock. In
    // WAL mode, if another connection (the ledger writer's thread) committed since that read, the
    // upgrade fails at once with SQLITE_BUSY_SNAPSHOT — busy_timeout never waits — and the request
    // was a 500 (a key created right after a paid request). `begin immediate` takes the write lock
    // first, so it waits its turn like any writer.
    const source = text === BEGIN_DEFERRED ? BEGIN_IMMEDIATE : text;
    let statement = this.#statements.get(source);
    if (!statement) {
      statement = this.raw.prepare(source);
      if (this.#statements.size >= SQLITE_STATEMENT_CACHE_SIZE) {
        this.#statements.delete(this.#statements.keys().next().value!);
      }
      this.#statements.set(source, statement);
    }
    return statement;
  }

  pragma(source: string): unknown {
    return this.raw.pragma(source);
  }

  get open(): boolean {
    return this.raw.open;
  }

  close(): void {
    this.#statements.clear();
    if (this.raw.open) this.raw.close();
  }
}
