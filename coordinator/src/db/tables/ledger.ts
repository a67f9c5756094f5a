/**
 * The ledger's tables. Money columns are bigint integers of nanousd (1e-9 USD); PostgreSQL returns
 * int8 as a string and SQLite as a number, so reads go through `toBigInt`.
 */
import type { ColumnType } from 'kysely';

/** A money column: read as whatever the driver gives, written as bigint. */
export type MoneyColumn = ColumnType<string | number | bigint, bigint, bigint>;
/** Milliseconds since the epoch. */
export type TimeColumn = ColumnType<string | number | bigint, number, number>;

/**
 * One account per holder of credits: a user (account id = user id), a provider's earnings
 * (`provider:<owner address or node id>`), the platform's fees (`platform`) or the refund pool
 * (`refund_pool`).
 * `balance` is what the holder can spend now; `reserved` is held for requests in flight.
 */
export interface LedgerAccountsTable {
  account_id: string;
  balance: MoneyColumn;
  reserved: MoneyColumn;
  spend: MoneyColumn;
  updated_at: TimeColumn;
}

/** Append-only: every change of a balance is one row; the sum of an account's amounts is its balance. */
export interface LedgerEntriesTable {
  id: string;
  account_id: string;
  kind: string;
  /** Signed change of `balance`. */
  amount: MoneyColumn;
  balance_after: MoneyColumn;
  /** Idempotency reference, unique per kind (payment id, reservation id…). */
  ref: string | null;
  created_at: TimeColumn;
}

/** A hold on credits for one request, settled or released exactly once. */
export interface LedgerReservationsTable {
  id: string;
  account_id: string;
  amount: MoneyColumn;
  status: string;
  created_at: TimeColumn;
  updated_at: TimeColumn;
  /** The replica whose request holds it (null: written before migration 010). */
  holder: string | null;
}

/** A replica's liveness: renewed while it runs (replica-leases.ts). */
export interface ReplicaLeasesTable {
  replica_id: string;
  expires_at: TimeColumn;
}

export interface LedgerTables {
  ledger_accounts: LedgerAccountsTable;
  ledger_entries: LedgerEntriesTable;
  ledger_reservations: LedgerReservationsTable;
  replica_leases: ReplicaLeasesTable;
}

/** Entry kinds. `topup` and `adjustment` come from outside (chain top-ups, operators). */
export const ENTRY_KINDS = {
  topup: 'topup',
  reserve: 'reserve',
  /** A hold given back whole (nothing delivered, or the request failed). */
  release: 'release',
  /** A hold closed by its request: the hold back, less what the request cost. */
  settle: 'settle',
  providerCredit: 'provider_credit',
  fee: 'fee',
  adjustment: 'adjustment',
  /** Earnings moved from a node's own provider account to its owner's, when it is linked. */
  earningsTransfer: 'earnings_transfer',
  /** Earnings paid out on chain from the treasury (ref: the payout id). */
  payout: 'payout',
  /** A payout that never reached the chain, or reverted: the earnings back (ref: the payout id). */
  payoutRefund: 'payout_refund',
  /** A canary's pay (or a verify job's fee), from the platform's fee income to the provider (trust/). */
  trustPayment: 'trust_payment',
  /**
   * A convicted node's unpaid earnings, forfeited into the refund pool (trust/slashing/convict.ts; ref:
   * `<conviction ref>:node|owner:from|to`).
   */
  earningsForfeit: 'earnings_forfeit',
  /** The platform fee on a convicted node's jobs, back into the refund pool (ref: `<conviction ref>:fee:from|to`). */
  feeReturn: 'fee_return',
  /** What a client paid for a convicted node's job, back from the refund pool (ref: `<usage row id>:from|to`). */
  convictionRefund: 'conviction_refund',
} as const;
export type EntryKind = (typeof ENTRY_KINDS)[keyof typeof ENTRY_KINDS];

export const RESERVATION_STATUS = { held: 'held', settled: 'settled', released: 'released' } as const;
export type ReservationStatus = (typeof RESERVATION_STATUS)[keyof typeof RESERVATION_STATUS];

/** Account id of the platform's fee income. */
export const PLATFORM_ACCOUNT_ID = 'platform';

/**
 * Account id of the refund pool: a platform-side account fed by convicted nodes' forfeited earnings
 * (and the platform fee on their jobs), from which clients they served are refunded (trust/slashing/convict.ts).
 */
export const REFUND_POOL_ACCOUNT_ID = 'refund_pool';

/** Account id of a provider's earnings. */
export function providerAccountId(ownerOrNodeId: string): string {
  return `provider:${ownerOrNodeId.toLowerCase()}`;
}
