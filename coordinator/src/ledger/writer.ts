import { Worker } from 'node:worker_threads';
import type { Hold, ReserveResult, Settlement, SettleOutcome } from './types.js';

/** An account's money as the ledger reports it: spendable, held for requests in flight, spent. */
export type Balance = {
  /** Spendable now, nanousd. */
  balanceNano: bigint;
  /** Total charged for inference so far. */
  spendNano: bigint;
  /** Held for requests in flight. */
  reservedNano: bigint;
};

/** One ledger operation as the writer thread receives it. */
export type WriterOp = { id: number } & (
  | { op: 'reserve'; hold: Hold; keep: boolean }
  | { op: 'settle'; settlement: Settlement }
  | { op: 'release'; reservationId: string; now: number }
  | { op: 'balance'; accountId: string }
  | { op: 'sweep'; before: number }
);

/** The writer thread's answer to one operation: its value, and the account's balance after it. */
export type WriterReply = {
  id: number;
  value?: unknown;
  account?: { id: string; balanceNano: bigint };
  error?: { name: string; message: string };
};

/** What the writer thread posts: answers in the order the operations ran, and its commit counts. */
export type WriterMessage = {
  replies: WriterReply[];
  stats: { transactions: number; operations: number };
};

/** A user whose spendable balance this process knows. */
type Admitted = {
  /** The database's balance after the last answered operation, less the holds sent since. */
  available: bigint;
  /** Holds sent to the writer thread and not yet answered: operation id → amount. */
  holds: Map<number, bigint>;
};

/**
 * The writer thread's entry, beside this module: compiled, writer-thread.js itself; from the
 * TypeScript sources (tsx, vitest) a JavaScript bootstrap that registers tsx first, since a worker
 * thread starts without the loaders of the thread that made it.
 */
const WRITER_THREAD_ENTRY = import.meta.url.endsWith('.ts')
  ? './writer-thread-bootstrap.js'
  : './writer-thread.js';

/** Users remembered at most; past it, those with no hold in flight are forgotten. */
const MAX_ADMITTED = 100_000;

/**
 * The ledger's writes to a SQLite database, in a thread of their own. SQLite writes synchronously:
 * on the event loop, every commit's log write waited whenever the background checkpoint's fsync
 * ran (stalls of 10–25 ms at 1,000 req/s in bench/gateway-load.ts, all requests in flight waiting
 * behind them). Here a worker thread with its own connection runs the same operations
 * (reserve/settle/release, group-committed as in batch.ts) and the event loop only posts them.
 *
 * A reservation does not wait for its commit: this process decides it from the user's spendable
 * balance as the database last reported it, less the holds it sent since — exact, because on
 * SQLite this process is the ledger's only writer and decreases a balance only by a hold. Every
 * answer carries the account's balance after the operation, so the figure follows the database
 * (a top-up, a release, a settlement). A hold it cannot cover is checked against the database
 * before the 402. The thread then decides the hold again, in order behind the operations sent
 * before it, against the database's balance less the holds it keeps: a hold whose id the ledger
 * generated is kept in the thread's memory and written with its settlement, one durable write per
 * paid request (unwritten-holds.ts); one with the caller's id is written at once. The settlement's
 * conditional UPDATE still guards the balance, so if the database ever refused a hold admitted
 * here (another process writing the same file), the balance stays whole and the request's
 * settlement reports the hold missing.
 */
export class LedgerWriter {
  readonly #worker: Worker;
  #nextId = 1;
  #outbox: WriterOp[] = [];
  readonly #waiting = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  readonly #admitted = new Map<string, Admitted>();
  readonly #loading = new Map<string, Promise<void>>();
  /** Reservations waiting for the database's balance: asked for, not sent yet. */
  readonly #admitting = new Set<Promise<ReserveResult>>();
  #sent = 0;
  #answered = 0;
  #idle: { upTo: number; resolve(): void }[] = [];
  #stats = { transactions: 0, operations: 0 };
  #stopped: Error | undefined;

  constructor(file: string) {
    this.#worker = new Worker(new URL(WRITER_THREAD_ENTRY, import.meta.url), {
      workerData: { file },
    });
    this.#worker.unref();
    this.#worker.on('message', (message: WriterMessage) => this.#onMessage(message));
    this.#worker.on('error', (error) => this.#stop(error));
    this.#worker.on('exit', (code) => this.#stop(new Error(`the ledger writer thread exited (${code})`)));
  }

  /** False once the thread stopped; the ledger then writes on the caller's connection again. */
  get running(): boolean {
    return this.#stopped === undefined;
  }

  /**
   * Places a hold. One whose id the ledger generated (`waitForCommit` false) cannot collide and is
   * answered at once; one with the caller's id waits for its commit, which checks it.
   */
  reserve(hold: Hold, waitForCommit: boolean): Promise<ReserveResult> {
    const user = this.#admitted.get(hold.userId);
    if (user && user.available >= hold.amountNano) return this.#place(user, hold, waitForCommit);
    // The database is asked first; until the hold is sent, idle() counts it here.
    const admission = this.#refresh(hold.userId).then(() => {
      const known = this.#admitted.get(hold.userId);
      if (!known || known.available < hold.amountNano)
        return { ok: false, reason: 'insufficient_credits' } as const;
      return this.#place(known, hold, waitForCommit);
    });
    this.#admitting.add(admission);
    const done = () => this.#admitting.delete(admission);
    admission.then(done, done);
    return admission;
  }

  #place(user: Admitted, hold: Hold, waitForCommit: boolean): Promise<ReserveResult> {
    user.available -= hold.amountNano;
    const { id, answer } = this.#send({ op: 'reserve', hold, keep: !waitForCommit });
    user.holds.set(id, hold.amountNano);
    if (waitForCommit) return answer as Promise<ReserveResult>;
    // Refused or lost, the hold is missing when the request settles, which reports it.
    answer.catch(() => {});
    return Promise.resolve({
      ok: true,
      reservationId: hold.reservationId,
      amountNano: hold.amountNano,
      balanceNano: user.available,
    });
  }

  settle(settlement: Settlement): Promise<SettleOutcome | null> {
    return this.#send({ op: 'settle', settlement }).answer as Promise<SettleOutcome | null>;
  }

  release(reservationId: string, now: number): Promise<boolean> {
    return this.#send({ op: 'release', reservationId, now }).answer as Promise<boolean>;
  }

  /** Forgets the holds the thread keeps that were placed before `before`; how many. */
  forgetHolds(before: number): Promise<number> {
    return this.#send({ op: 'sweep', before }).answer as Promise<number>;
  }

  /** The account after every operation sent before, holds kept in the thread included. */
  balance(accountId: string): Promise<Balance> {
    return this.#send({ op: 'balance', accountId }).answer as Promise<Balance>;
  }

  /** Operations sent and not yet answered. */
  get pending(): number {
    return this.#sent - this.#answered;
  }

  get stats(): Readonly<{ transactions: number; operations: number }> {
    return { ...this.#stats };
  }

  /** Resolves once every operation asked for so far is answered (committed, or failed). */
  async idle(): Promise<void> {
    if (this.#admitting.size > 0) await Promise.allSettled([...this.#admitting]);
    if (this.#answered >= this.#sent) return;
    const upTo = this.#sent;
    return new Promise((resolve) => this.#idle.push({ upTo, resolve }));
  }

  /** Lets the thread finish what it was sent, close its connection and exit. */
  async close(): Promise<void> {
    if (!this.running) return;
    this.#flush();
    const exited = new Promise((resolve) => this.#worker.once('exit', resolve));
    // Held until it exits: an idle process would otherwise end before it has closed its connection.
    this.#worker.ref();
    this.#worker.postMessage('close');
    await exited;
  }

  /** Stops the thread at once, as a crash would (tests). */
  async terminate(): Promise<void> {
    await this.#worker.terminate();
  }

  /** Asks the database for the user's balance (behind the operations already sent). */
  #refresh(userId: string): Promise<void> {
    let loading = this.#loading.get(userId);
    if (!loading) {
      loading = this.#send({ op: 'balance', accountId: userId }).answer.then(
        () => void this.#loading.delete(userId),
        (error: unknown) => {
          this.#loading.delete(userId);
          throw error;
        },
      );
      this.#loading.set(userId, loading);
    }
    return loading;
  }

  #send(op: DistributiveOmit<WriterOp, 'id'>): { id: number; answer: Promise<unknown> } {
    const id = this.#nextId++;
    if (this.#stopped) return { id, answer: Promise.reject(this.#stopped) };
    this.#outbox.push({ ...op, id } as WriterOp);
    // Everything sent in this turn of the event loop goes in one message.
    if (this.#outbox.length === 1) setImmediate(() => this.#flush());
    if (this.#sent++ === this.#answered) this.#worker.ref();
    const answer = new Promise<unknown>((resolve, reject) => this.#waiting.set(id, { resolve, reject }));
    return { id, answer };
  }

  #flush(): void {
    if (this.#outbox.length === 0 || this.#stopped) return;
    this.#worker.postMessage(this.#outbox);
    this.#outbox = [];
  }

  #onMessage({ replies, stats }: WriterMessage): void {
    this.#stats = stats;
    for (const reply of replies) {
      if (reply.account) this.#follow(reply.id, reply.account.id, reply.account.balanceNano);
      const waiting = this.#waiting.get(reply.id);
      this.#waiting.delete(reply.id);
      if (reply.error)
        waiting?.reject(Object.assign(new Error(reply.error.message), { name: reply.error.name }));
      else waiting?.resolve(reply.value);
    }
    this.#answered += replies.length;
    this.#settleIdle();
  }

  /**
   * An answer for operation `id` carried the account's balance right after it ran. Operations run
   * and are answered in the order sent, so the holds still unanswered were all sent after it.
   */
  #follow(id: number, accountId: string, balanceNano: bigint): void {
    let user = this.#admitted.get(accountId);
    if (!user) {
      if (!this.#loading.has(accountId)) return; // not a user this process admits holds for
      if (this.#admitted.size >= MAX_ADMITTED) this.#forgetIdle();
      user = { available: 0n, holds: new Map() };
      this.#admitted.set(accountId, user);
    }
    user.holds.delete(id);
    let held = 0n;
    for (const amount of user.holds.values()) held += amount;
    user.available = balanceNano - held;
  }

  #forgetIdle(): void {
    for (const [userId, user] of this.#admitted) if (user.holds.size === 0) this.#admitted.delete(userId);
  }

  #settleIdle(): void {
    if (this.#answered >= this.#sent) this.#worker.unref();
    this.#idle = this.#idle.filter((waiter) => {
      if (waiter.upTo > this.#answered) return true;
      waiter.resolve();
      return false;
    });
  }

  #stop(error: Error): void {
    if (this.#stopped) return;
    this.#stopped = error;
    for (const waiting of this.#waiting.values()) waiting.reject(error);
    this.#answered += this.#waiting.size;
    this.#waiting.clear();
    this.#admitted.clear();
    this.#settleIdle();
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
