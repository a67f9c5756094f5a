import type { Tx } from '../db/tx.js';

/**
 * Changes that many operations of one group commit make to the same few rows (a provider's
 * earnings, the platform fee, an API key's spend), summed per row while the transaction runs and
 * written once, at its end: one UPDATE per row for the whole commit instead of one per operation.
 * The sums live on the transaction (Tx.sums); the ledger's batches (batch.ts) call `writeAtCommit`
 * last, inside the transaction.
 */
export class AtCommit<T> {
  readonly #merge: (sum: T, next: T) => void;
  readonly #write: (tx: Tx, sums: T[]) => Promise<void>;

  constructor(options: {
    /** Adds `next` into `sum` (same row). */
    merge(sum: T, next: T): void;
    /** Writes the sums of one transaction. */
    write(tx: Tx, sums: T[]): Promise<void>;
  }) {
    this.#merge = options.merge;
    this.#write = options.write;
  }

  /** Adds a change to row `key`, to be written when `tx` ends. */
  add(tx: Tx, key: string, change: T): void {
    let pending = tx.sums.get(this) as Map<string, T> | undefined;
    if (!pending) {
      pending = new Map();
      tx.sums.set(this, pending);
    }
    const sum = pending.get(key);
    if (sum) this.#merge(sum, change);
    else pending.set(key, { ...change });
  }

  async flush(tx: Tx): Promise<void> {
    const pending = tx.sums.get(this) as Map<string, T> | undefined;
    if (!pending) return;
    tx.sums.delete(this);
    await this.#write(tx, [...pending.values()]);
  }
}

/** Writes what every AtCommit gathered in `tx`, in the order they first added to it. */
export async function writeAtCommit(tx: Tx): Promise<void> {
  for (const atCommit of [...tx.sums.keys()]) await (atCommit as AtCommit<unknown>).flush(tx);
}
