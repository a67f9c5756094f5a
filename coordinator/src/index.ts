/** @gpumesh/coordinator — the public surface. Internals stay behind their folders. */
export { type AppContext, type BuildAppOptions, buildApp, type RouteEntry } from './app.js';
export { type AuthUser, bearerToken } from './auth/require-user.js';
export { type Clock, systemClock } from './clock.js';
export {
  type CoordinatorConfig,
  CoordinatorConfigSchema,
  type LoadConfigOptions,
  loadConfig,
} from './config.js';
export { toBigInt, toBigIntOrNull, toMillis } from './db/bigint.js';
export { isPostgres } from './db/dialect.js';
export { migrate } from './db/migrate.js';
export type { Database } from './db/schema.js';
export { openStore, Store, type StoreTarget } from './db/store.js';
export { ApiError, ERRORS, type ErrorBody, type ErrorCode, isErrorBody } from './errors.js';
export { type Balance, Ledger, type LedgerOptions } from './ledger/ledger.js';
export { main, type RunningServer, startServer } from './server.js';
export { createKeyring, type Keyring } from './wallets/keyring.js';
export { loadProxyAccount } from './wallets/load-proxy-account.js';
