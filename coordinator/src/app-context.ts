/**
 * The types every capability's routes share: a leaf module, so routes never import app.ts (which
 * imports them) and the import graph has no cycle.
 */
import type { Kysely } from 'kysely';
import type { PublicClient } from 'viem';
import type { Catalog } from './catalog/catalog.js';
import type { ChainServices } from './chain/create-chain-services.js';
import type { TransferOutbox } from './chain/transfer-outbox.js';
import type { Clock } from './clock.js';
import type { CoordinatorConfig } from './config.js';
import type { Database } from './db/schema.js';
import type { Store } from './db/store.js';
import type { AcceptedKeys } from './keys/accepted-keys.js';
import type { Ledger } from './ledger/ledger.js';
import type { Keyring } from './wallets/keyring.js';

/** A route as registered, for the discovery files and the route-table tests. */
export type RouteEntry = {
  method: string;
  url: string;
  schema: Record<string, unknown> | undefined;
};

/** What every capability's routes get: pass it as the plugin options. */
export type AppContext = {
  readonly config: CoordinatorConfig;
  /** This replica's id: its hub's coordinatorId, its holds' holder, its lease (ledger/replica-leases.ts). */
  readonly replicaId: string;
  /** The database, opened by whoever built the app (it closes it after the app). */
  readonly store: Store;
  /** store.db */
  readonly db: Kysely<Database>;
  /** The ledger of record on the store (its writer thread stops when the app closes). */
  readonly ledger: Ledger;
  readonly clock: Clock;
  /** Canonical model ids by weights hash (catalog/catalog.ts). */
  readonly catalog: Catalog;
  readonly keyring: Keyring;
  /** HS256 key for session JWTs. */
  readonly jwtKey: Uint8Array;
  /** Chain RPC client when config.chain.rpcUrl is set (EIP-1271 sign-in). */
  readonly chainClient: PublicClient | undefined;
  /** The API keys this app accepted lately (a short-lived cache of key lookups). */
  readonly acceptedKeys: AcceptedKeys;
  /** Every route registered so far (filled by an onRoute hook). */
  readonly routes: readonly RouteEntry[];
};

/** What each chain route plugin gets: the app context and the one set of chain services. */
export type ChainRouteOptions = {
  ctx: AppContext;
  /** The chain services; throws chain_unavailable when no chain RPC is configured. */
  services: () => ChainServices;
  /** The transfer outbox every on-chain send goes through; throws chain_unavailable like `services`. */
  outbox: () => TransferOutbox;
};
