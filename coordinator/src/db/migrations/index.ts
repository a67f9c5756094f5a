import type { Migration } from 'kysely';
import { base001 } from './001-base.js';
import { ledger002 } from './002-ledger.js';
import { chain003 } from './003-chain.js';
import { chainCursors004 } from './004-chain-cursors.js';
import { heldReservations005 } from './005-held-reservations.js';
import { walletLocks006 } from './006-wallet-locks.js';
import { nodeUsageViolations007 } from './007-node-usage-violations.js';
import { generationsAndKeyLimits008 } from './008-generations-and-key-limits.js';
import { activityIndex009 } from './009-activity-index.js';
import { replicaLeases010 } from './010-replica-leases.js';
import { nodeOwners011 } from './011-node-owners.js';
import { providerPayouts012 } from './012-provider-payouts.js';
import { nodeSessionsAndTtft013 } from './013-node-sessions-and-ttft.js';
import { trust014 } from './014-trust.js';
import { slashes015 } from './015-slashes.js';
import { nodeMisses016 } from './016-node-misses.js';
import { trustEvidence017 } from './017-trust-evidence.js';
import { trustAudit018 } from './018-trust-audit.js';
import { transferOutbox019 } from './019-transfer-outbox.js';
import { storedResponses020 } from './020-stored-responses.js';
import { usageRollups021 } from './021-usage-rollups.js';
import { openRouterShapes022 } from './022-openrouter-shapes.js';
import { stakingPool023 } from './023-staking-pool.js';
import { poolMigration024 } from './024-pool-migration.js';
import { cachedTokens025 } from './025-cached-tokens.js';
import { usageRequestOrigin026 } from './026-usage-request-origin.js';
import { substitutionEvidence027 } from './027-substitution-evidence.js';

/**
 * Every migration, in order. Capabilities append theirs (`NNN-name.ts`, SQL that runs on both
 * SQLite and PostgreSQL: text ids, bigint integers, no dialect-only types). Never edit a landed one.
 */
export const migrations: readonly (Migration & { name: string })[] = [
  base001,
  ledger002,
  chain003,
  chainCursors004,
  heldReservations005,
  walletLocks006,
  nodeUsageViolations007,
  generationsAndKeyLimits008,
  activityIndex009,
  replicaLeases010,
  nodeOwners011,
  providerPayouts012,
  nodeSessionsAndTtft013,
  trust014,
  slashes015,
  nodeMisses016,
  trustEvidence017,
  trustAudit018,
  transferOutbox019,
  storedResponses020,
  usageRollups021,
  openRouterShapes022,
  stakingPool023,
  poolMigration024,
  cachedTokens025,
  usageRequestOrigin026,
  substitutionEvidence027,
];
