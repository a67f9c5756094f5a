import { type Clock, systemClock } from '../clock.js';
import { toBigInt } from '../db/bigint.js';
import { newId } from '../db/ids.js';
import type { Store } from '../db/store.js';
import { RESERVATION_STATUS } from '../db/tables/ledger.js';
import { LedgerBatcher } from './batch.js';
import { type CreditParams, type CreditResult, credit } from './credit.js';
import { assertPositive, LedgerInputError } from './ledger-input.js';
import { releaseIn } from './release.js';
import { dropLease, findOrphanedHolds, renewLease } from './replica-leases.js';
import { reserveIn } from './reserve.js';
import { settleIn } from './settle.js';
import { STALE_HOLDS_PER_SWEEP } from './stale-holds.js';
import type { Hold, ReserveResult, Settlement, SettleOutcome } from './types.js';
import { type Balance, LedgerWriter } from './writer.js';

export type { Balance, CreditParams, CreditResult, ReserveResult, SettleOutcome };

export type LedgerOptions = {
  clock?: Clock;
  /** The replica this ledger's holds belong to (replica-leases.ts); none: holds are untagged. */
  holder?: string;
  /**
   * On a SQLite file: write in a thread of its own (writer.ts), started here; default true.
   * PostgreSQL and `:memory:` always write on the caller's connection.
   */
  writerThread?: boolean;
};

/**
 * The ledger of record: holds, settlements, releases and credits, every one an integer move of
 * nanousd in a transaction, the sum of an account's entries always its balance. Built once per
 * app (buildApp) on its store and passed to what moves or reads money.
 *
 * Holds, settlements and releases are group-committed (batch.ts); on a SQLite file they run in
 * the ledger's writer thread (writer.ts), on PostgreSQL on the pool. Reads (`balance`, `idle`)
 * first wait for every operation this ledger queued, so a client reads its own writes.
 */
export class Ledger {
  readonly #store: Store;
  readonly #clock: Clock;
  readonly #batcher: LedgerBatcher;
  readonly #writer: LedgerWriter | undefined;
  readonly #holder: string | undefined;

  constructor(store: Store, options: LedgerOptions = {}) {
    this.#store = store;
    this.#clock = options.clock ?? systemClock;
    this.#holder = options.holder;
    this.#batcher = new LedgerBatcher(store.db, store.sqlite?.connection);
    const file = store.sqlite?.file;
    this.#writer = file && (options.writerThread ?? true) ? new LedgerWriter(file) : undefined;
  }

  /** The writer thread while it runs; once it stopped, the ledger writes on the store's connection. */
  get writer(): LedgerWriter | undefined {
    return this.#writer?.running ? this.#writer : undefined;
  }

  /**
   * Holds `amountNano` (the request's worst case) of the user's credits; refused when the balance
   * does not cover it. `reservationId` is generated when absent.
   */
  reserve(params: { userId: string; amountNano: bigint; reservationId?: string }): Promise<ReserveResult> {
    assertPositive(params.amountNano, 'amountNano');
    const now = this.#clock.now();
    const hold: Hold = {
      userId: params.userId,
      amountNano: params.amountNano,
      reservationId: params.reservationId ?? newId(now),
      now,
      holder: this.#holder ?? null,
    };
    const writer = this.writer;
    // A hold whose id the ledger generated cannot collide: the writer answers it before its commit.
    if (writer) return writer.reserve(hold, params.reservationId !== undefined);
    return this.#batcher.run((tx) => reserveIn(tx, hold));
  }

  /**
   * Settles a reservation to the actual cost (settle.ts): the charge (never above the hold), the
   * provider's credit, the fee and the usage row in one transaction. Null when the reservation was
   * settled or released before: nothing changes.
   */
  settle(params: Omit<Settlement, 'now'>): Promise<SettleOutcome | null> {
    if (params.providerNano < 0n || params.feeNano < 0n) throw new LedgerInputError('negative settlement');
    const settlement: Settlement = { ...params, now: this.#clock.now() };
    const writer = this.writer;
    if (writer) return writer.settle(settlement);
    return this.#batcher.run((tx) => settleIn(tx, settlement));
  }

  /** Gives a whole reservation back; false when it was settled or released before. */
  async release(reservationId: string): Promise<boolean> {
    const now = this.#clock.now();
    const writer = this.writer;
    if (writer) return writer.release(reservationId, now);
    return (await this.#batcher.run((tx) => releaseIn(tx, reservationId, now))) !== null;
  }

  /** Credits an account once per (kind, ref) (credit.ts). */
  credit(params: Omit<CreditParams, 'clock'>): Promise<CreditResult> {
    return credit(this.#store.db, { ...params, clock: this.#clock });
  }

  /** An account's balance, after every operation queued before the call; zeros if it never held any. */
  async balance(accountId: string): Promise<Balance> {
    await this.idle();
    // The writer thread keeps holds it has not written: it answers with them counted.
    const writer = this.writer;
    if (writer) return writer.balance(accountId);
    const row = await this.#store.db
      .selectFrom('ledger_accounts')
      .select(['balance', 'spend', 'reserved'])
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    if (!row) return { balanceNano: 0n, spendNano: 0n, reservedNano: 0n };
    return {
      balanceNano: toBigInt(row.balance),
      spendNano: toBigInt(row.spend),
      reservedNano: toBigInt(row.reserved),
    };
  }

  /**
   * Gives back holds nobody will settle: a request's hold is settled or released within its job
   * timeout plus the ledger's queue, unless the coordinator that held it died between the
   * reservation and the settlement. Any hold older than `olderThanMs` is such a leftover, released
   * whole (what such a request delivered, if anything, is not known and not billed). Safe with many
   * replicas and concurrent sweeps: release is idempotent. Returns how many it released.
   */
  async releaseStaleHolds(olderThanMs: number): Promise<number> {
    const cutoff = this.#clock.now() - olderThanMs;
    // The writer thread's unwritten holds are forgotten, which releases them whole.
    const forgotten = (await this.writer?.forgetHolds(cutoff)) ?? 0;
    const rows = await this.#store.db
      .selectFrom('ledger_reservations')
      .select('id')
      .where('status', '=', RESERVATION_STATUS.held)
      .where('created_at', '<', cutoff)
      .orderBy('created_at')
      .limit(STALE_HOLDS_PER_SWEEP)
      .execute();
    let released = forgotten;
    for (const { id } of rows) if (await this.release(id)) released++;
    return released;
  }

  /**
   * Gives back the holds of replicas that died (their lease ran out: replica-leases.ts), whole,
   * as releaseStaleHolds does, but within seconds. Returns how many it released.
   */
  async releaseOrphanedHolds(): Promise<number> {
    if (!this.#holder) return 0;
    const ids = await findOrphanedHolds(this.#store.db, this.#holder, this.#clock.now());
    let released = 0;
    for (const id of ids) if (await this.release(id)) released++;
    return released;
  }

  /** Renews this ledger's replica lease (replica-leases.ts). */
  async renewLease(): Promise<void> {
    if (this.#holder) await renewLease(this.#store.db, this.#holder, this.#clock.now());
  }

  /** Ends the lease: this replica is closing. */
  async dropLease(): Promise<void> {
    if (this.#holder) await dropLease(this.#store.db, this.#holder);
  }

  /**
   * Resolves once every operation this ledger queued so far has committed: reads wait for it, so a
   * client reads its own writes (a settlement that finishes after the response, say). Another
   * replica's writes show once they committed.
   */
  async idle(): Promise<void> {
    // The writer thread's operations, and any the store's connection ran (the thread stopped).
    await this.#writer?.idle();
    await this.#batcher.idle();
  }

  /** Operations queued and not yet committed. */
  get pending(): number {
    return (this.#writer?.pending ?? 0) + this.#batcher.pending;
  }

  /** The group commits so far (for /metrics and tests). */
  get stats(): Readonly<{ transactions: number; operations: number }> {
    const own = this.#batcher.stats;
    const thread = this.#writer?.stats ?? { transactions: 0, operations: 0 };
    return {
      transactions: own.transactions + thread.transactions,
      operations: own.operations + thread.operations,
    };
  }

  /** Lets queued operations commit and stops the writer thread; the store stays open. */
  async close(): Promise<void> {
    await this.#writer?.close();
    await this.#batcher.idle();
  }
}
