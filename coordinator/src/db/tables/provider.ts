import type { ColumnType } from 'kysely';

/** A node's owner wallet (lowercase address), from its owner proof. */
export interface NodeOwnersTable {
  node_id: string;
  owner: string;
  linked_at: ColumnType<string | number | bigint, number, number>;
}

/**
 * A payout of an owner's earnings from the treasury (provider/payout.ts). The earnings are debited
 * when the row is inserted (same transaction); the transaction is signed and its raw bytes stored
 * before it is broadcast, so a crash at any point leaves a row the settlement can finish from the
 * chain (settle-payouts.ts): the same signed bytes are mined once at most.
 */
export interface ProviderPayoutsTable {
  id: string;
  owner: string;
  /** The client's Idempotency-Key; unique per owner. */
  idempotency_key: string | null;
  token: string;
  /** Smallest unit of the token (decimal text: wei can exceed int64). */
  amount: string;
  /** What was debited from the earnings, nanousd. */
  usd_nano: ColumnType<string | number | bigint, bigint, bigint>;
  to_address: string;
  status: PayoutStatus;
  tx_hash: string | null;
  /** The signed transaction, kept until the payout is settled. */
  raw_tx: string | null;
  error_code: string | null;
  created_at: ColumnType<string | number | bigint, number, number>;
  updated_at: ColumnType<string | number | bigint, number, number>;
}

/**
 * pending: debited, not yet signed · signed: raw transaction stored, maybe broadcast · sent:
 * broadcast, waiting for its receipt · paid: mined and succeeded · failed: never mined, or
 * reverted; the earnings were given back.
 */
export const PAYOUT_STATUS = {
  pending: 'pending',
  signed: 'signed',
  sent: 'sent',
  paid: 'paid',
  failed: 'failed',
} as const;
export type PayoutStatus = (typeof PAYOUT_STATUS)[keyof typeof PAYOUT_STATUS];
/** Payouts that count against the daily cap and may still reach the chain. */
export const OPEN_OR_PAID: readonly PayoutStatus[] = ['pending', 'signed', 'sent', 'paid'];
/** Payouts the settlement still has to finish. */
export const UNSETTLED: readonly PayoutStatus[] = ['pending', 'signed', 'sent'];

/** A node session one replica held: uptime is the union of these intervals (node-sessions.ts). */
export interface NodeSessionsTable {
  id: string;
  /** Lowercase. */
  node_id: string;
  replica: string;
  started_at: ColumnType<string | number | bigint, number, number>;
  /** Renewed while the session lives; bounds it when its replica died without closing it. */
  last_seen_at: ColumnType<string | number | bigint, number, number>;
  ended_at: ColumnType<string | number | bigint | null, number | null, number | null>;
}

export interface ProviderTables {
  node_owners: NodeOwnersTable;
  node_sessions: NodeSessionsTable;
  provider_payouts: ProviderPayoutsTable;
}
