/**
 * The Kysely `Database` interface: every table of the coordinator. Each capability adds its tables
 * in ./tables/<capability>.ts, listed here, and a migration in ./migrations: below every
 * capability, so the store needs none of them. Conventions, so both SQLite and PostgreSQL agree:
 * ids are text; times are bigint milliseconds since the epoch; money is bigint nanousd
 * (1e-9 USD); wei amounts are decimal TEXT (they can exceed int64). Read bigint columns back
 * through `toBigInt` (pg returns int8 as string, SQLite as number).
 */
import type { ColumnType, Generated } from 'kysely';
import type { ChainTables } from './tables/chain.js';
import type { LedgerTables } from './tables/ledger.js';
import type { ProviderTables } from './tables/provider.js';
import type { TrustTables } from './tables/trust.js';
import type { UsageTables } from './tables/usage.js';
import type { UsageRollupTables } from './tables/usage-rollups.js';

/** A bigint column: written as bigint, read as whatever the driver returns (use toBigInt). */
export type BigIntColumn = ColumnType<bigint | number | string, bigint | number, bigint | number>;
/** A nullable bigint column. */
export type NullableBigIntColumn = ColumnType<
  bigint | number | string | null,
  bigint | number | null | undefined,
  bigint | number | null
>;

export type UsersTable = {
  id: string;
  /** EIP-55 checksummed. */
  address: string;
  created_at: BigIntColumn;
};

export type AuthNoncesTable = {
  nonce: string;
  /** The checksummed address the nonce was issued to. */
  address: string;
  /** The exact message text handed out; verify compares it verbatim. */
  message: string;
  expires_at: BigIntColumn;
  created_at: BigIntColumn;
};

export type RevokedTokensTable = {
  jti: string;
  /** The token's own exp, in SECONDS since the epoch (JWT convention); the row may go after it. */
  expires_at: BigIntColumn;
};

/** Small secrets the coordinator creates once and keeps (e.g. the JWT signing key), encrypted. */
export type AppSecretsTable = {
  name: string;
  /** keyring ciphertext, never plaintext. */
  value: string;
  created_at: BigIntColumn;
};

export type WalletsTable = {
  user_id: string;
  proxy_address: string;
  /** keyring ciphertext of the proxy wallet's private key. */
  proxy_key_enc: string;
  native_account: string;
  native_public_key: string;
  /** keyring ciphertext of the native account's private key. */
  native_key_enc: string;
  created_at: BigIntColumn;
};

export type ApiKeysTable = {
  id: string;
  user_id: string;
  name: string;
  /** The first characters of the secret, shown in lists. */
  prefix: string;
  /** sha256 hex of the secret; the secret itself is never stored. */
  secret_hash: string;
  /** 'active' | 'revoked' (see keys/key-status.ts). */
  status: string;
  created_at: BigIntColumn;
  revoked_at: NullableBigIntColumn;
  last_used_at: NullableBigIntColumn;
  /** Total charged through this key, nanousd. Updated by the ledger. */
  spend_nano: ColumnType<bigint | number | string, bigint | number | undefined, bigint | number>;
  /** The most this key may spend, nanousd; null: no limit but the account's balance. */
  limit_nano: ColumnType<
    bigint | number | string | null,
    bigint | number | null | undefined,
    bigint | number | null
  >;
};

/** A response of /v1/responses kept for GET and `previous_response_id` (v1/responses/). */
export type StoredResponsesTable = {
  id: string;
  user_id: string;
  /** JSON: the Response object. */
  response: string;
  /** JSON: the chat messages up to and with its answer, without the instructions. */
  conversation: string;
  /** JSON: the response's input items as OpenAI lists them (null before migration 022). */
  input_items: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: BigIntColumn;
};

export type Database = {
  users: UsersTable;
  auth_nonces: AuthNoncesTable;
  revoked_tokens: RevokedTokensTable;
  app_secrets: AppSecretsTable;
  wallets: WalletsTable;
  api_keys: ApiKeysTable;
  stored_responses: StoredResponsesTable;
} & LedgerTables &
  UsageTables &
  UsageRollupTables &
  ChainTables &
  ProviderTables &
  TrustTables;

// Kept so capabilities adding auto-increment columns have the helper at hand.
export type { Generated };
