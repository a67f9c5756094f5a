import type SQLite from 'better-sqlite3';
import { CompiledQuery, type Kysely, type Transaction } from 'kysely';
import { isPostgres } from './dialect.js';
import type { Database } from './schema.js';

const directConnections = new WeakMap<Kysely<Database>, SQLite.Database>();

/**
 * Inside a SQLite transaction that holds its connection (Kysely's lock is taken for the whole
 * transaction, so nothing else runs on it meanwhile): lets Statements run in it go straight to
 * the connection, skipping Kysely's executor, connection lock and result copy — most of a short
 * statement's cost. The ledger's group commits run this way (batch.ts).
 */
export function runStatementsDirectly(trx: Transaction<Database>, connection: SQLite.Database): void {
  directConnections.set(trx, connection);
}

/**
 * One SQL statement written once, with `?` placeholders, that runs on SQLite and PostgreSQL
 * without Kysely's query builder. For the hot paths (the ledger, the key check): building and
 * compiling a query costs more than running it. The text is plain SQL both dialects accept; for
 * PostgreSQL the placeholders become `$1…$n` (converted once), so the text must hold no other `?`.
 * Runs on a Kysely instance or a transaction, so it takes part in the caller's transaction.
 */
export class Statement<Row = Record<string, unknown>> {
  readonly #sqlite: string;
  readonly #postgres: string;

  constructor(text: string) {
    this.#sqlite = text;
    let n = 0;
    this.#postgres = text.replaceAll('?', () => `$${++n}`);
  }

  async all(db: Kysely<Database>, params: readonly unknown[]): Promise<Row[]> {
    const connection = directConnections.get(db);
    if (connection) {
      // The connection caches prepared statements by text (create-database.ts).
      const statement = connection.prepare(this.#sqlite);
      if (statement.reader) return statement.all(params) as Row[];
      statement.run(params);
      return [];
    }
    const text = isPostgres(db) ? this.#postgres : this.#sqlite;
    const result = await db.executeQuery<Row>(CompiledQuery.raw(text, params as unknown[]));
    return result.rows as Row[];
  }

  async first(db: Kysely<Database>, params: readonly unknown[]): Promise<Row | undefined> {
    return (await this.all(db, params))[0];
  }
}

/** `count` rows of `columns` placeholders: "(?, ?), (?, ?)". */
export function valueRows(columns: number, count: number): string {
  const row = `(${Array.from({ length: columns }, () => '?').join(', ')})`;
  return Array.from({ length: count }, () => row).join(', ');
}
