/**
 * Tables of the chain capabilities (top-up, staking, withdraw). Conventions of db/schema.ts:
 * text ids, bigint milliseconds, bigint nanousd; wei and token amounts as decimal TEXT (they can
 * exceed int64). Read bigint columns back through toBigInt.
 */
import type { ColumnType } from 'kysely';

type BigIntColumn = ColumnType<bigint | number | string, bigint | number, bigint | number>;
type NullableBigIntColumn = ColumnType<
  bigint | number | string | null,
  bigint | number | null | undefined,
  bigint | number | null
>;

/** One row per payment ever credited (or being credited): the paymentId credits once, ever. */
export type TopupsTable = {
  /** The transaction hash, lowercase. */
  payment_id: string;
  user_id: string;
  /** native | USD.s | USDT.s | USDC.s */
  source: string;
  /** What the transaction paid the proxy wallet, in the source's smallest unit (decimal text). */
  amount: string;
  credited_nano: BigIntColumn;
  /** 'crediting' (claimed, ledger credit in progress) | 'credited'. */
  status: string;
  /** The user's balance right after the credit, nanousd (repeats return the original result). */
  balance_nano: NullableBigIntColumn;
  block_number: BigIntColumn;
  created_at: BigIntColumn;
};

/** One position per staker: what the tier ladder and the rewards read. */
export type StakesTable = {
  user_id: string;
  /** The owner's connected wallet (checksummed): tierOf(address) reads this. */
  address: string;
  quantity_wei: string;
  /** Tier name at the current quantity. */
  tier: string;
  multiplier_bps: BigIntColumn;
  /** Global reward index value up to which accrued_scaled is settled (decimal text). */
  index_snapshot: string;
  /** Unpaid rewards × REWARD_SCALE (decimal text). */
  accrued_scaled: string;
  updated_at: BigIntColumn;
};

/** The global reward index (one row, id 'global'): value at at_s, growing apy_bps per second since. */
export type RewardIndexTable = {
  id: string;
  value: string;
  at_s: BigIntColumn;
  apy_bps: BigIntColumn;
};

/** Append-only audit of stake changes, each with the transaction that moved the tokens. */
export type StakeEventsTable = {
  id: string;
  user_id: string;
  /** stake | unstake | claim | release | slash */
  kind: string;
  amount_wei: string;
  tx_hash: string | null;
  /** A slash's evidence (JSON: the failed verifications); null for the other kinds. */
  evidence: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: BigIntColumn;
};

/** Unstaked funds waiting out the unbonding period, then returned from the staking vault. */
export type UnbondingsTable = {
  id: string;
  user_id: string;
  amount_wei: string;
  release_at: BigIntColumn;
  /** unbonding | releasing | released */
  status: string;
  tx_hash: string | null;
  /** Where its UnbondRequested event sits: block × 10⁶ + log index (null before migration 023). */
  chain_pos: ColumnType<
    bigint | number | string | null,
    bigint | number | null | undefined,
    bigint | number | null
  >;
  created_at: BigIntColumn;
};

/** Reward payouts: reserved in the database before the transfer, so a claim pays once. */
export type RewardPayoutsTable = {
  id: string;
  user_id: string;
  amount_wei: string;
  /** pending | paid | failed */
  status: string;
  tx_hash: string | null;
  created_at: BigIntColumn;
};

/** Audit of every well-formed withdrawal attempt, refused ones included. */
export type WithdrawalsTable = {
  id: string;
  user_id: string;
  to_address: string;
  /** native | USD.s | USDT.s | USDC.s */
  token: string;
  /** Smallest unit, decimal text. */
  amount: string;
  /** USD value at the time, nanousd (the daily limit sums it). */
  usd_nano: BigIntColumn;
  /** queued | refused | sending | sent | failed */
  status: string;
  tx_hash: string | null;
  error_code: string | null;
  created_at: BigIntColumn;
};

/** Where a chain scanner (the deposit watcher) has read up to. */
export type ChainCursorsTable = {
  name: string;
  /** The last block fully processed. */
  block: BigIntColumn;
};

/**
 * A lease on a service wallet, shared by every replica: whoever holds the row may check and send
 * for that wallet (wallet-lock.ts). A lease that outlives its holder (a crash) expires.
 */
export type WalletLocksTable = {
  /** The wallet's checksummed address. */
  address: string;
  /** A random id of the holder (one per acquisition). */
  holder: string;
  /** Wall-clock ms after which the lease may be taken over. */
  expires_at: BigIntColumn;
};

/** One on-chain send of the transfer outbox (chain/transfer-outbox.ts). */
export type ChainTransfersTable = {
  id: string;
  /** Which use asked for it: payout | release | slash | withdraw | claim. */
  purpose: string;
  /** The id of the use's row. */
  ref: string;
  from_address: string;
  to_address: string;
  value_wei: string;
  data: string | null;
  gas: string;
  /** `native` or a token contract address. */
  asset: string;
  /** What leaves `from` in `asset`'s smallest unit (decimal text). */
  amount: string;
  status: TransferStatus;
  nonce: NullableBigIntColumn;
  tx_hash: string | null;
  /** The signed transaction, stored before it is broadcast; kept once final (an audit trail). */
  raw_tx: string | null;
  claimed_by: string | null;
  claimed_at: NullableBigIntColumn;
  error_code: string | null;
  /** Refusals before signing in a row for its use, this one included (0: not refused). */
  attempt: ColumnType<bigint | number | string, bigint | number | undefined, bigint | number>;
  /** After a refusal: when its use may try again (exponential back-off), ms. */
  retry_at: NullableBigIntColumn;
  created_at: BigIntColumn;
  updated_at: BigIntColumn;
};

/** One vault-era staking migration per pool (staking/migrate-vault.ts). */
export type PoolMigrationsTable = {
  pool: string;
  vault: string;
  /** moving | done */
  status: string;
  created_at: BigIntColumn;
  updated_at: BigIntColumn;
};

/** One position the migration moves into the pool, with the transfer that moves it. */
export type PoolMigrationStepsTable = {
  /** keccak-256 of it is the pool's migration id. */
  id: string;
  pool: string;
  /** stake | unbonding | slash | reward | end */
  kind: string;
  user_id: string | null;
  ref: string | null;
  amount_wei: string;
  release_at_s: NullableBigIntColumn;
  /** planned | sending | done */
  status: string;
  transfer_id: string | null;
  tx_hash: string | null;
  created_at: BigIntColumn;
  updated_at: BigIntColumn;
};

/**
 * pending: enqueued, not signed · signed: raw bytes stored, maybe broadcast · broadcast: sent to
 * the chain · mined: receipt, success · reverted: receipt, failure · replaced: its nonce went to
 * another transaction, it can never be mined · cancelled: refused before signing (nothing sent).
 */
export const TRANSFER_STATUS = {
  pending: 'pending',
  signed: 'signed',
  broadcast: 'broadcast',
  mined: 'mined',
  reverted: 'reverted',
  replaced: 'replaced',
  cancelled: 'cancelled',
} as const;
export type TransferStatus = (typeof TRANSFER_STATUS)[keyof typeof TRANSFER_STATUS];
/** Statuses the outbox still has to finish. */
export const OPEN_TRANSFER: readonly TransferStatus[] = ['pending', 'signed', 'broadcast'];
/** How a transfer ended. */
export type TransferOutcome = Extract<TransferStatus, 'mined' | 'reverted' | 'replaced' | 'cancelled'>;

export type ChainTables = {
  chain_cursors: ChainCursorsTable;
  wallet_locks: WalletLocksTable;
  topups: TopupsTable;
  stakes: StakesTable;
  reward_index: RewardIndexTable;
  stake_events: StakeEventsTable;
  unbondings: UnbondingsTable;
  reward_payouts: RewardPayoutsTable;
  withdrawals: WithdrawalsTable;
  chain_transfers: ChainTransfersTable;
  pool_migrations: PoolMigrationsTable;
  pool_migration_steps: PoolMigrationStepsTable;
};

export const TOPUP_STATUS = { crediting: 'crediting', credited: 'credited' } as const;
export const UNBONDING_STATUS = {
  unbonding: 'unbonding',
  releasing: 'releasing',
  released: 'released',
} as const;
export const PAYOUT_STATUS = { pending: 'pending', paid: 'paid', failed: 'failed' } as const;
export const WITHDRAWAL_STATUS = {
  /** Recorded with its transfer, waiting for the wallet's queue to check the limit and balance. */
  queued: 'queued',
  refused: 'refused',
  sending: 'sending',
  sent: 'sent',
  failed: 'failed',
} as const;
export const STAKE_EVENT_KIND = {
  stake: 'stake',
  unstake: 'unstake',
  claim: 'claim',
  release: 'release',
} as const;
