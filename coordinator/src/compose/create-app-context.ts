import { randomBytes } from 'node:crypto';
import { createPublicClient, http, type PublicClient } from 'viem';
import type { AppContext, RouteEntry } from '../app-context.js';
import { loadJwtKey } from '../auth/load-jwt-key.js';
import { loadCatalog } from '../catalog/catalog.js';
import type { Clock } from '../clock.js';
import type { CoordinatorConfig } from '../config.js';
import type { Store } from '../db/store.js';
import { AcceptedKeys } from '../keys/accepted-keys.js';
import { Ledger } from '../ledger/ledger.js';
import type { Keyring } from '../wallets/keyring.js';

export type CreateAppContextOptions = {
  config: CoordinatorConfig;
  store: Store;
  clock: Clock;
  keyring: Keyring;
  /** On a SQLite file, the ledger writes in a thread of its own (default true; ledger/ledger.ts). */
  ledgerWriterThread?: boolean | undefined;
  /** Filled with every route as it is registered. */
  routes: RouteEntry[];
};

/**
 * The context every capability's routes get, built once: a new replica id, the Ledger on the
 * store (it holds its holds under that id), the catalog, the session JWT key (created on first
 * start), the chain client when a chain is configured, the accepted-keys cache. Frozen.
 */
export async function createAppContext(options: CreateAppContextOptions): Promise<AppContext> {
  const { config, store, clock, keyring } = options;
  const jwtKey = await loadJwtKey(store.db, keyring, clock);
  const replicaId = `coordinator-${randomBytes(6).toString('hex')}`;
  return Object.freeze({
    config,
    replicaId,
    store,
    db: store.db,
    ledger: new Ledger(store, {
      clock,
      holder: replicaId,
      ...(options.ledgerWriterThread !== undefined ? { writerThread: options.ledgerWriterThread } : {}),
    }),
    clock,
    catalog: loadCatalog(config.catalogFile),
    keyring,
    jwtKey,
    chainClient: config.chain.rpcUrl
      ? (createPublicClient({ transport: http(config.chain.rpcUrl) }) as PublicClient)
      : undefined,
    acceptedKeys: new AcceptedKeys(),
    routes: options.routes,
  });
}
