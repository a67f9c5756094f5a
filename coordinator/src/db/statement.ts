import { CompiledQuery, type Kysely } from 'kysely';
import { isPostgres } from './dialect.js';
import type { Database } from './schema.js';

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
