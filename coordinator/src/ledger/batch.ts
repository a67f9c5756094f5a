import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { SqliteConnection } from '../db/sqlite-connection.js';
import { Tx } from '../db/tx.js';
import { writeAtCommit } from './at-commit.js';

type Work<T> = (tx: Tx) => Promise<T>;
type Queued = { work: Work<unknown>; resolve(value: unknown): void; reject(error: unknown): void };

/** Operations one transaction takes at most. */
export const MAX_BATCH = 256;

/**
 * Group commit for the ledger. Each operation (reserve, settle, release) is a short transaction;
 * under load, committing them one by one costs more than running them. Operations that arrive
 * while a transaction commits wait for the next one, and run together, in arrival order, each
 * with its own conditional updates — so the outcome of every operation (a 402 included) is exactly
 * what it would be alone, and one commit carries many. With no load a batch is one operation and
 * costs what a plain transaction does.
 *
 * When an operation throws, its batch rolled back as a whole: the others are run again, each in a
 * transaction of its own, so only the faulty one fails.
 */
export class LedgerBatcher {
  readonly #db: Kysely<Database>;
  /** On SQLite, the connection its transactions run their statements on directly. */
  readonly #connection: SqliteConnection | undefined;
  #queue: Queued[] = [];
  #draining = false;
  /** Operations queued and finished so far; a reader waits for the count queued before it. */
  #queued = 0;
  #finished = 0;
  #waiters: { upTo: number; resolve(): void }[] = [];
  /** Transactions committed or attempted, and the operations they carried. */
  readonly stats = { transactions: 0, operations: 0 };

  constructor(db: Kysely<Database>, connection: SqliteConnection | undefined) {
    this.#db = db;
    this.#connection = connection;
  }

  /** Runs `work` in a ledger transaction shared with the operations queued at the same time. */
  run<T>(work: Work<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      this.#queued++;
      if (!this.#draining) {
        this.#draining = true;
        setImmediate(() => void this.#drain());
      }
    });
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
      const batch = this.#queue.splice(0, MAX_BATCH);
      await this.#commit(batch);
      this.#done(batch.length);
    }
    this.#draining = false;
  }

  async #commit(batch: Queued[]): Promise<void> {
    this.stats.transactions++;
    this.stats.operations += batch.length;
    if (batch.length === 1) {
      const [one] = batch as [Queued];
      await this.#transaction([one]).then(([result]) => one.resolve(result), one.reject);
      return;
    }
    let results: unknown[];
    try {
      results = await this.#transaction(batch);
    } catch {
      this.stats.transactions += batch.length;
      for (const one of batch) {
        await this.#transaction([one]).then(([result]) => one.resolve(result), one.reject);
      }
      return;
    }
    for (const [i, one] of batch.entries()) one.resolve(results[i]);
  }

  /** Runs the operations in one transaction, in order, then the sums they left for its end. */
  async #transaction(batch: Queued[]): Promise<unknown[]> {
    let tx: Tx | undefined;
    try {
      return await this.#db.transaction().execute(async (trx) => {
        tx = new Tx(trx, this.#connection);
        const out: unknown[] = [];
        for (const { work } of batch) out.push(await work(tx));
        await writeAtCommit(tx);
        return out;
      });
    } catch (error) {
      tx?.rolledBack();
      throw error;
    }
  }

  #done(count: number): void {
    this.#finished += count;
    this.#waiters = this.#waiters.filter((w) => {
      if (w.upTo > this.#finished) return true;
      w.resolve();
      return false;
    });
  }

  /** Operations queued and not yet committed. */
  get pending(): number {
    return this.#queue.length;
  }

  /** Resolves once every operation queued so far has committed (or failed); later ones don't count. */
  idle(): Promise<void> {
    if (this.#finished >= this.#queued) return Promise.resolve();
    const upTo = this.#queued;
    return new Promise((resolve) => this.#waiters.push({ upTo, resolve }));
  }
}
