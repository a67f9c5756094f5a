import type { Kysely } from 'kysely';
import type { ChainServices } from '../chain/create-chain-services.js';
import type { TransferHandler } from '../chain/transfer-types.js';
import type { Clock } from '../clock.js';
import type { Database } from '../db/schema.js';
import { legacyTransfers } from './legacy-transfers.js';
import { MIGRATION_PURPOSE, migrationTransfers } from './migration-transfers.js';

/** Registers the vault migration's purposes on an outbox: the vault era's three and `pool_migrate`. */
export function registerMigrationTransfers(
  outbox: { register(purpose: string, handler: TransferHandler): unknown },
  deps: { db: Kysely<Database>; services: ChainServices; clock: Clock },
): void {
  for (const [purpose, handler] of Object.entries(legacyTransfers(deps.services, deps.clock))) {
    outbox.register(purpose, handler);
  }
  outbox.register(MIGRATION_PURPOSE, migrationTransfers(deps));
}
