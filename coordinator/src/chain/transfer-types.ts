/** The shapes the transfer outbox (transfer-outbox.ts) shares with the uses that register on it. */
import type { Kysely, Transaction } from 'kysely';
import type { LocalAccount, TransactionReceipt } from 'viem';
import type { Database } from '../db/schema.js';
import type { ChainTransfersTable, TransferOutcome } from '../db/tables/chain.js';

export type TransferRow = Omit<
  ChainTransfersTable,
  'nonce' | 'claimed_at' | 'created_at' | 'updated_at' | 'attempt' | 'retry_at'
> & {
  nonce: string | number | bigint | null;
  attempt?: string | number | bigint;
  retry_at?: string | number | bigint | null;
  claimed_at: string | number | bigint | null;
  created_at: string | number | bigint;
  updated_at: string | number | bigint;
};

/** The points of a transfer's life a crash can fall between (for the crash-injection suite). */
export const TRANSFER_STEPS = ['claimed', 'stored', 'broadcast', 'receipt'] as const;
export type TransferStep = (typeof TRANSFER_STEPS)[number];

/** What a use tells the outbox about its transfers. */
export type TransferHandler = {
  /** The key that signs `from` (a vault, the treasury, a proxy wallet). */
  signer(transfer: TransferRow): Promise<LocalAccount>;
  /**
   * Inside the wallet's queue, right before signing: a balance or limit check that must not race
   * another send of the wallet. An ApiError thrown here cancels the transfer (nothing was signed).
   */
  precheck?(transfer: TransferRow, check: { feeWei: bigint; db: Kysely<Database> }): Promise<void>;
  /** In the transaction that moves the transfer to signed or broadcast (a status the use mirrors). */
  progress?(trx: Transaction<Database>, transfer: TransferRow, status: 'signed' | 'broadcast'): Promise<void>;
  /**
   * A contract call whose use reads its events: the outbox fetches the receipt of a mined transfer
   * (before the transaction that records the end) and hands it to `settle`.
   */
  withReceipt?: boolean;
  /**
   * In the transaction that records how the transfer ended, once: the use's consequence. `receipt`:
   * the mined transaction's, for a handler `withReceipt`.
   */
  settle(
    trx: Transaction<Database>,
    transfer: TransferRow,
    outcome: TransferOutcome,
    receipt?: TransactionReceipt,
  ): Promise<void>;
};

/** Where a log line goes (pino's shape; fastify's `app.log` fits). */
export type OutboxLog = {
  warn(object: object, message: string): void;
  error(object: object, message: string): void;
};
