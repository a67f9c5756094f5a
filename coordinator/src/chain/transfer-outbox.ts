/**
 * The transfer outbox: the one way the coordinator moves money on chain. A use (payout, unbonding
 * release, slash, withdrawal, reward claim) enqueues a transfer in the same database transaction
 * that records why it is owed; the outbox carries it pending → signed (raw bytes stored) →
 * broadcast → mined | reverted | replaced (or cancelled: refused before signing, nothing left the
 * process), each step a guarded status change, and settles the use in the transaction that
 * records the end. Crash semantics, whatever the step a process dies at:
 * - A row is claimed (`claimed_by`, `claimed_at`) before any work on it; a claim older than
 *   `staleClaimMs` belongs to a process that died and is taken over.
 * - The signed bytes are stored before they are broadcast, under the wallet's signer queue (and
 *   lock). A transfer found `signed` or `broadcast` is never signed again: its stored bytes are
 *   broadcast again (the same transaction, mined at most once), and if the chain refuses them
 *   because their nonce went to another transaction, it is `replaced` — the use decides whether
 *   to try again (with a new transfer).
 * - A transfer found `pending` never left the process: it is signed now.
 * Every error is logged; none is swallowed: the caller of `process` gets it, and `sweep` logs it
 * and goes on with the next row.
 */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { type Address, type Hex, keccak256, WaitForTransactionReceiptTimeoutError } from 'viem';
import type { Clock } from '../clock.js';
import { toBigInt } from '../db/bigint.js';
import type { Database } from '../db/schema.js';
import type { TransferOutcome, TransferStatus } from '../db/tables/chain.js';
import { OPEN_TRANSFER, TRANSFER_STATUS } from '../db/tables/chain.js';
import { ApiError } from '../errors.js';
import type { ChainContext } from './chain-context.js';
import { CHAIN_ID, GAS_PRICE_WEI } from './constants.js';
import { lookupTransaction } from './lookup-transaction.js';
import { nextNonce } from './next-nonce.js';
import { DEFAULT_RECEIPT_TIMEOUT_MS } from './send-transaction.js';
import type { OutboxLog, TransferHandler, TransferRow, TransferStep } from './transfer-types.js';
import { wrapChainError } from './wrap-chain-error.js';

/**
 * A claim older than this is a dead process's: another takes the row over. A claim is held only
 * from the claim to the broadcast (a few RPC calls, and the wallet's queue); the receipt wait holds
 * none. Taking over a live claim is safe too: the first holder's next step is guarded on its claim,
 * and bytes already stored are the same transaction whoever broadcasts them.
 */
export const DEFAULT_STALE_CLAIM_MS = 10_000;
/** Most open transfers one sweep looks at. */
export const SWEEP_BATCH = 50;

export type TransferOutboxOptions = {
  db: Kysely<Database>;
  context: ChainContext;
  clock: Clock;
  log: OutboxLog;
  staleClaimMs?: number;
  receiptTimeoutMs?: number;
  /**
   * Called at each step (tests inject crashes here: a hook that never resolves is a process that
   * died at that point; one that throws is an error there).
   */
  onStep?: (step: TransferStep, transfer: TransferRow) => Promise<void> | void;
};

/** Where `process` left a transfer: final, or still open (the sweep finishes it). */
export type TransferResult = { transfer: TransferRow; error?: ApiError };

/** The outbox of one process: claims, signs, broadcasts and settles transfers. */
export class TransferOutbox {
  readonly #db: Kysely<Database>;
  readonly #context: ChainContext;
  readonly #clock: Clock;
  readonly #log: OutboxLog;
  readonly #staleClaimMs: number;
  readonly #receiptTimeoutMs: number;
  readonly #onStep: TransferOutboxOptions['onStep'];
  readonly #handlers = new Map<string, TransferHandler>();
  /** This process's claim token. */
  readonly holder = randomUUID();

  constructor(options: TransferOutboxOptions) {
    this.#db = options.db;
    this.#context = options.context;
    this.#clock = options.clock;
    this.#log = options.log;
    this.#staleClaimMs = options.staleClaimMs ?? DEFAULT_STALE_CLAIM_MS;
    this.#receiptTimeoutMs = options.receiptTimeoutMs ?? DEFAULT_RECEIPT_TIMEOUT_MS;
    this.#onStep = options.onStep;
  }

  /** Registers the use that owns transfers of `purpose`; the sweep only takes registered ones. */
  register(purpose: string, handler: TransferHandler): this {
    this.#handlers.set(purpose, handler);
    return this;
  }

  /** Loads a transfer. */
  find(id: string): Promise<TransferRow | undefined> {
    return this.#db.selectFrom('chain_transfers').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /**
   * Carries one transfer as far as it goes now: to its end, or — a receipt wait that timed out, an
   * RPC that failed after the bytes were stored, a claim held by a live process — left open for
   * the sweep. An error after the claim is logged, the claim given back, and the error returned
   * with the row (never thrown away).
   */
  async process(id: string): Promise<TransferResult> {
    const claimed = await this.#claim(id);
    if (!claimed) return { transfer: (await this.find(id))! };
    const handler = this.#handler(claimed);
    try {
      await this.#onStep?.('claimed', claimed);
      let row = claimed;
      if (row.status === TRANSFER_STATUS.pending) {
        const signed = await this.#signAndStore(row, handler);
        if ('cancelled' in signed) return signed.cancelled;
        row = signed.row;
        await this.#onStep?.('stored', row);
      } else {
        const found = await this.#recover(row, handler);
        if (found) return { transfer: found };
      }
      const sent = await this.#broadcast(row, handler);
      if (sent === 'replaced') return { transfer: await this.#finish(row, handler, 'replaced') };
      row = sent;
      // On chain now: waiting for the receipt is only watching, so the claim is given back and a
      // sweep (of any process) may finish the row meanwhile; whoever claims it next records the end.
      await this.#release(id);
      await this.#onStep?.('broadcast', row);
      const receipt = await this.#waitForReceipt(row);
      if (receipt === 'none') return { transfer: (await this.find(id))! };
      const mine = await this.#claim(id);
      if (!mine) return { transfer: (await this.find(id))! };
      await this.#onStep?.('receipt', mine);
      const done = await this.#finish(mine, handler, receipt === 'success' ? 'mined' : 'reverted');
      return receipt === 'success'
        ? { transfer: done }
        : {
            transfer: done,
            error: new ApiError('chain_tx_failed', `Transaction ${row.tx_hash} failed on chain.`),
          };
    } catch (error) {
      const wrapped = wrapChainError(error);
      this.#log.error(
        { err: error, transfer: id, purpose: claimed.purpose, code: wrapped.code },
        'transfer outbox: step failed; left open for the sweep',
      );
      await this.#release(id).catch((releaseError: unknown) =>
        this.#log.error(
          { err: releaseError, transfer: id },
          'transfer outbox: could not give the claim back',
        ),
      );
      return { transfer: (await this.find(id))!, error: wrapped };
    }
  }

  /**
   * Finishes open transfers: those no process holds (older than `olderThanMs`), and those whose claim
   * went stale. Errors are logged per row; the sweep goes on. Returns how many it looked at and finished.
   */
  async sweep(options: { olderThanMs?: number } = {}): Promise<{ looked: number; finished: number }> {
    const olderThanMs = options.olderThanMs ?? 0;
    const purposes = [...this.#handlers.keys()];
    if (purposes.length === 0) return { looked: 0, finished: 0 };
    const now = this.#clock.now();
    const rows = await this.#db
      .selectFrom('chain_transfers')
      .select('id')
      .where('status', 'in', OPEN_TRANSFER)
      .where('purpose', 'in', purposes)
      .where('updated_at', '<=', now - olderThanMs)
      .where((eb) => eb.or([eb('claimed_by', 'is', null), eb('claimed_at', '<', now - this.#staleClaimMs)]))
      .orderBy('created_at')
      .limit(SWEEP_BATCH)
      .execute();
    let finished = 0;
    for (const { id } of rows) {
      const { transfer } = await this.process(id);
      if (!(OPEN_TRANSFER as readonly string[]).includes(transfer.status)) finished++;
    }
    return { looked: rows.length, finished };
  }

  #handler(row: TransferRow): TransferHandler {
    const handler = this.#handlers.get(row.purpose);
    if (!handler) throw new Error(`transfer outbox: no handler for purpose ${row.purpose}`);
    return handler;
  }

  /** Takes the row for this process: open, and unclaimed or claimed by a process that died. */
  async #claim(id: string): Promise<TransferRow | undefined> {
    const now = this.#clock.now();
    const result = await this.#db
      .updateTable('chain_transfers')
      .set({ claimed_by: this.holder, claimed_at: now })
      .where('id', '=', id)
      .where('status', 'in', OPEN_TRANSFER)
      .where((eb) => eb.or([eb('claimed_by', 'is', null), eb('claimed_at', '<', now - this.#staleClaimMs)]))
      .executeTakeFirst();
    if (result.numUpdatedRows !== 1n) return undefined;
    const row = await this.find(id);
    return row?.claimed_by === this.holder ? row : undefined;
  }

  async #release(id: string): Promise<void> {
    await this.#db
      .updateTable('chain_transfers')
      .set({ claimed_by: null, claimed_at: null })
      .where('id', '=', id)
      .where('claimed_by', '=', this.holder)
      .execute();
  }

  /**
   * pending → signed, in the wallet's queue: the use's check, a nonce, the signature, and the raw
   * bytes stored — all before anything is broadcast. A check's refusal, or any error before the
   * bytes are stored, cancels the transfer: nothing can have reached the chain.
   */
  async #signAndStore(
    row: TransferRow,
    handler: TransferHandler,
  ): Promise<{ row: TransferRow } | { cancelled: TransferResult }> {
    const { client, queue } = this.#context;
    let stored: TransferRow | undefined;
    try {
      const account = await handler.signer(row);
      stored = await queue.run(row.from_address, async () => {
        const gas = BigInt(row.gas);
        await handler.precheck?.(row, { feeWei: gas * GAS_PRICE_WEI, db: this.#db });
        // The nonce is taken under the wallet's lock, after the checks, so no replica takes it too.
        const nonce = await nextNonce(this.#db, client, account.address);
        const raw = await account.signTransaction({
          type: 'legacy',
          chainId: CHAIN_ID,
          nonce,
          gas,
          gasPrice: GAS_PRICE_WEI,
          to: row.to_address as Address,
          value: BigInt(row.value_wei),
          ...(row.data ? { data: row.data as Hex } : {}),
        });
        const next = {
          ...row,
          status: TRANSFER_STATUS.signed,
          nonce,
          tx_hash: keccak256(raw),
          raw_tx: raw,
        } satisfies TransferRow;
        const moved = await this.#advance(row, handler, TRANSFER_STATUS.pending, next);
        if (!moved) throw new Error('transfer outbox: lost the claim before storing the signed bytes');
        return next;
      });
    } catch (error) {
      if ((await this.find(row.id))?.status !== TRANSFER_STATUS.pending) throw error;
      const refusal = wrapChainError(error);
      this.#log.warn(
        { err: error, transfer: row.id, purpose: row.purpose, code: refusal.code },
        'transfer outbox: refused before signing; cancelled',
      );
      const transfer = await this.#finish(row, handler, TRANSFER_STATUS.cancelled, refusal.code);
      return { cancelled: { transfer, error: refusal } };
    }
    return { row: stored };
  }

  /** Stores the next status (and columns) if the row is still `from` and ours; runs `progress`. */
  async #advance(
    row: TransferRow,
    handler: TransferHandler,
    from: TransferStatus,
    next: TransferRow,
  ): Promise<boolean> {
    return this.#db.transaction().execute(async (trx) => {
      const result = await trx
        .updateTable('chain_transfers')
        .set({
          status: next.status,
          nonce: next.nonce === null ? null : toBigInt(next.nonce),
          tx_hash: next.tx_hash,
          raw_tx: next.raw_tx,
          updated_at: this.#clock.now(),
        })
        .where('id', '=', row.id)
        .where('status', '=', from)
        .where('claimed_by', '=', this.holder)
        .executeTakeFirst();
      if (result.numUpdatedRows !== 1n) return false;
      if (next.status === TRANSFER_STATUS.signed || next.status === TRANSFER_STATUS.broadcast) {
        await handler.progress?.(trx, next, next.status);
      }
      return true;
    });
  }

  /**
   * A row found signed or broadcast (its process died, or its receipt wait timed out): settled
   * from the chain if it has a receipt, left for `#broadcast` otherwise. Returns the row if it
   * ended here.
   */
  async #recover(row: TransferRow, handler: TransferHandler): Promise<TransferRow | undefined> {
    const hash = row.tx_hash as Hex | null;
    if (!hash) throw new Error(`transfer outbox: ${row.id} is ${row.status} without a hash`);
    const found = await lookupTransaction(this.#context.client, hash);
    if (found !== 'success' && found !== 'reverted') return undefined;
    await this.#onStep?.('receipt', row);
    return this.#finish(row, handler, found === 'success' ? 'mined' : 'reverted');
  }

  /**
   * Sends the stored bytes (again, if they were sent before: the same transaction, so it is mined
   * once at most). Refused and still without a receipt because the nonce is taken: `replaced`.
   */
  async #broadcast(row: TransferRow, handler: TransferHandler): Promise<TransferRow | 'replaced'> {
    const { client } = this.#context;
    const hash = row.tx_hash as Hex;
    if (row.status === TRANSFER_STATUS.broadcast && (await lookupTransaction(client, hash)) !== 'unknown') {
      return row;
    }
    if (!row.raw_tx) throw new Error(`transfer outbox: ${row.id} has no stored bytes to broadcast`);
    try {
      await client.sendRawTransaction({ serializedTransaction: row.raw_tx as Hex });
    } catch (error) {
      // Refused: mined meanwhile, already in the pool (as good as broadcast), or its nonce is gone.
      const found = await lookupTransaction(client, hash);
      if (found === 'success' || found === 'reverted') return row;
      if (found === 'pending') {
        // Broadcast before (by a process that died before recording it): recorded below.
      } else if (/nonce/i.test(String((error as Error).message))) {
        this.#log.warn(
          { err: error, transfer: row.id, purpose: row.purpose, hash },
          'transfer outbox: its nonce went to another transaction; replaced',
        );
        return 'replaced';
      } else {
        throw error;
      }
    }
    if (row.status === TRANSFER_STATUS.broadcast) return row;
    const next = { ...row, status: TRANSFER_STATUS.broadcast } satisfies TransferRow;
    await this.#advance(row, handler, TRANSFER_STATUS.signed, next);
    return next;
  }

  #receipt = (hash: Hex) => this.#context.client.getTransactionReceipt({ hash });
  async #waitForReceipt(row: TransferRow): Promise<'success' | 'reverted' | 'none'> {
    try {
      const receipt = await this.#context.client.waitForTransactionReceipt({
        hash: row.tx_hash as Hex,
        timeout: this.#receiptTimeoutMs,
      });
      return receipt.status === 'success' ? 'success' : 'reverted';
    } catch (error) {
      if (error instanceof WaitForTransactionReceiptTimeoutError) {
        this.#log.warn({ transfer: row.id, hash: row.tx_hash }, 'transfer outbox: no receipt yet; left open');
        return 'none';
      }
      throw error;
    }
  }

  /**
   * Records the end, once (a guarded change from an open status), with the use's consequence in
   * the same transaction. Returns the row as it stands.
   */
  async #finish(
    row: TransferRow,
    handler: TransferHandler,
    outcome: TransferOutcome,
    errorCode: string | null = null,
  ): Promise<TransferRow> {
    const hash = row.tx_hash as Hex; // the receipt is read first: no RPC inside the transaction
    const receipt = outcome === 'mined' && handler.withReceipt ? await this.#receipt(hash) : undefined;
    await this.#db.transaction().execute(async (trx) => {
      const result = await trx
        .updateTable('chain_transfers')
        .set({
          status: outcome,
          error_code: errorCode ?? (outcome === 'mined' ? null : outcome),
          claimed_by: null,
          claimed_at: null,
          updated_at: this.#clock.now(),
        })
        .where('id', '=', row.id)
        .where('status', 'in', OPEN_TRANSFER)
        .where('claimed_by', '=', this.holder)
        .executeTakeFirst();
      if (result.numUpdatedRows !== 1n) return;
      if (outcome === 'reverted') {
        this.#log.error(
          { transfer: row.id, purpose: row.purpose, hash: row.tx_hash },
          'transfer outbox: the transaction reverted on chain',
        );
      }
      const current = await trx
        .selectFrom('chain_transfers')
        .selectAll()
        .where('id', '=', row.id)
        .executeTakeFirstOrThrow();
      await handler.settle(trx, current, outcome, receipt);
    });
    return (await this.find(row.id))!;
  }
}
