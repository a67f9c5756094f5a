import { CompiledQuery, type Kysely } from 'kysely';
import { isPostgres } from './dialect.js';
import type { Database } from './schema.js';
import { Tx } from './tx.js';

/**
 * One SQL statement written once, with `?` placeholders, that runs on SQLite and PostgreSQL
 * without Kysely's query builder. For the hot paths (the ledger, the key check): building and
 * compiling a query costs more than running it. The text is plain SQL both dialects accept; for
 * PostgreSQL the placeholders become `$1…$n` (converted once), so the text must hold no other `?`.
 * Runs on a Kysely instance, a transaction, or a Tx (straight on its SQLite connection, db/tx.ts),
 * so it takes part in the caller's transaction.
 */
export class Statement<Row = Record<string, unknown>> {
  readonly #sqlite: string;
  readonly #postgres: string;

  constructor(text: string) {
    this.#sqlite = text;
    let n = 0;
    this.#postgres = text.replaceAll('?', () => `$${++n}`);
  }

  async all(on: Kysely<Database> | Tx, params: readonly unknown[]): Promise<Row[]> {
    if (on instanceof Tx && on.connection) {
      // The connection caches prepared statements by text (sqlite-connection.ts).
      const statement = on.connection.prepare(this.#sqlite);
      if (statement.reader) return statement.all(params) as Row[];
      statement.run(params);
      return [];
    }
    const db = on instanceof Tx ? on.trx : on;
    const text = isPostgres(db) ? this.#postgres : this.#sqlite;
    const result = await db.executeQuery<Row>(CompiledQuery.raw(text, params as unknown[]));
    return result.rows as Row[];
  }

  async first(on: Kysely<Database> | Tx, params: readonly unknown[]): Promise<Row | undefined> {
    return (await this.all(on, params))[0];
  }
}

/** `count` rows of `columns` placeholders: "(?, ?), (?, ?)". */
export function valueRows(columns: number, count: number): string {
  const row = `(${Array.from({ length: columns }, () => '?').join(', ')})`;
  return Array.from({ length: count }, () => row).join(', ');
}
