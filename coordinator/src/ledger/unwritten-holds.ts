import type { Tx } from '../db/tx.js';
import type { Hold } from './types.js';

/**
 * The holds the SQLite writer thread keeps in its memory instead of writing them (writer-thread.ts):
 * a request's hold is written only with its settlement, in one transaction — one durable write per
 * paid request instead of two. A hold released is forgotten: nothing is written at all.
 *
 * Exact on one writer: on SQLite only the writer thread debits a user's balance, and only by a
 * hold, so the balance read in the thread's transaction less the holds kept here is what durable
 * holds would have left. A crash forgets them, which is what a restart did to durable holds anyway
 * (released whole: what such a request delivered is not known and not billed). Changes made inside
 * a transaction are undone if it rolls back (Tx.onRollback), so a group commit retried one by one
 * sees them as before.
 */
export class UnwrittenHolds {
  readonly #holds = new Map<string, Hold>();
  readonly #byAccount = new Map<string, bigint>();

  /** What the account's holds kept here add up to. */
  heldBy(accountId: string): bigint {
    return this.#byAccount.get(accountId) ?? 0n;
  }

  get size(): number {
    return this.#holds.size;
  }

  /** Keeps `hold` (within `tx`). */
  add(tx: Tx, hold: Hold): void {
    this.#put(hold);
    tx.onRollback(() => this.#delete(hold));
  }

  /** Takes the hold out, if it is kept here (within `tx`). */
  take(tx: Tx, reservationId: string): Hold | undefined {
    const hold = this.#holds.get(reservationId);
    if (!hold) return undefined;
    this.#delete(hold);
    tx.onRollback(() => this.#put(hold));
    return hold;
  }

  /** Forgets the holds placed before `cutoff` (leftovers: see Ledger.releaseStaleHolds); how many. */
  forgetOlderThan(cutoff: number): number {
    let forgotten = 0;
    for (const hold of this.#holds.values()) {
      if (hold.now >= cutoff) continue;
      this.#delete(hold);
      forgotten++;
    }
    return forgotten;
  }

  /** Takes every hold out (the thread is closing: they are written as ordinary holds). */
  drain(): Hold[] {
    const all = [...this.#holds.values()];
    this.#holds.clear();
    this.#byAccount.clear();
    return all;
  }

  #put(hold: Hold): void {
    this.#holds.set(hold.reservationId, hold);
    this.#byAccount.set(hold.userId, this.heldBy(hold.userId) + hold.amountNano);
  }

  #delete(hold: Hold): void {
    this.#holds.delete(hold.reservationId);
    const left = this.heldBy(hold.userId) - hold.amountNano;
    if (left === 0n) this.#byAccount.delete(hold.userId);
    else this.#byAccount.set(hold.userId, left);
  }
}
