import type { Transaction } from 'kysely';
import type { Database } from './schema.js';
import type { SqliteConnection } from './sqlite-connection.js';

/**
 * A transaction as the ledger's hot path runs it: Kysely's transaction, and on SQLite the
 * connection it holds. Kysely takes its connection lock for the whole transaction, so nothing else
 * runs on that connection meanwhile: Statements (db/statement.ts) run in a Tx with a connection go
 * straight to it, skipping Kysely's executor, lock and result copy — most of a short statement's
 * cost. `sums` is what at-commit.ts gathers for the transaction's end; `onRollback` undoes, when the
 * transaction rolls back, what an operation changed in memory beside it (ledger/unwritten-holds.ts).
 */
export class Tx {
  readonly sums = new Map<object, Map<string, unknown>>();
  readonly #undo: (() => void)[] = [];

  constructor(
    readonly trx: Transaction<Database>,
    readonly connection?: SqliteConnection,
  ) {}

  /** Runs `undo` if this transaction rolls back (latest first). */
  onRollback(undo: () => void): void {
    this.#undo.push(undo);
  }

  /** The transaction rolled back: undoes what was registered. */
  rolledBack(): void {
    for (const undo of this.#undo.splice(0).reverse()) undo();
  }
}
