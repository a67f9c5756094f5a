import type { Transaction } from 'kysely';
import type { Database } from '../db/schema.js';

const all: AtCommit<unknown>[] = [];

/**
 * Changes that many operations of one group commit make to the same few rows (a provider's
 * earnings, the platform fee, an API key's spend), summed per row while the transaction runs and
 * written once, at its end: one UPDATE per row for the whole commit instead of one per operation.
 * The ledger's batches (batch.ts) call `writeAtCommit` last, inside the transaction.
 */
export class AtCommit<T> {
  readonly #pending = new WeakMap<Transaction<Database>, Map<string, T>>();
  readonly #merge: (sum: T, next: T) => void;
  readonly #write: (trx: Transaction<Database>, sums: T[]) => Promise<void>;

  constructor(options: {
    /** Adds `next` into `sum` (same row). */
    merge(sum: T, next: T): void;
    /** Writes the sums of one transaction. */
    write(trx: Transaction<Database>, sums: T[]): Promise<void>;
  }) {
    this.#merge = options.merge;
    this.#write = options.write;
    all.push(this as AtCommit<unknown>);
  }

  /** Adds a change to row `key`, to be written when `trx` ends. */
  add(trx: Transaction<Database>, key: string, change: T): void {
    let pending = this.#pending.get(trx);
    if (!pending) {
      pending = new Map();
      this.#pending.set(trx, pending);
    }
    const sum = pending.get(key);
    if (sum) this.#merge(sum, change);
    else pending.set(key, { ...change });
  }

  async flush(trx: Transaction<Database>): Promise<void> {
    const pending = this.#pending.get(trx);
    if (!pending) return;
    this.#pending.delete(trx);
    await this.#write(trx, [...pending.values()]);
  }
}

/** Writes what every AtCommit gathered in `trx`. */
export async function writeAtCommit(trx: Transaction<Database>): Promise<void> {
  for (const atCommit of all) await atCommit.flush(trx);
}
