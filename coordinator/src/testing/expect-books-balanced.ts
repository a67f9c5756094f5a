import type { Kysely } from 'kysely';
import { createChainServices } from '../chain/create-chain-services.js';
import type { CoordinatorConfig } from '../config.js';
import type { Database } from '../db/schema.js';
import { ledgerIdle } from '../ledger/batch.js';
import { staleHoldAgeMs } from '../ledger/release-stale-holds.js';
import { reconcile } from '../reconcile/reconcile.js';

/**
 * The reconciliation check at the end of an end-to-end suite: waits for queued settlements, runs
 * `reconcile` over the store (and the chain, when `config` names one) and throws, listing every
 * difference, unless the books hold. Call it before the app closes its store.
 */
export async function expectBooksBalanced(
  db: Kysely<Database>,
  config?: Pick<CoordinatorConfig, 'chain' | 'staking' | 'router'>,
): Promise<void> {
  await ledgerIdle(db);
  const report = await reconcile({
    db,
    services: config ? createChainServices(config as CoordinatorConfig) : undefined,
    staleHoldMs: config ? staleHoldAgeMs(config.router) : 10 * 60_000,
    now: Date.now(),
  });
  if (report.differences.length > 0) {
    throw new Error(
      `reconcile found ${report.differences.length} differences: ${JSON.stringify(report.differences)}`,
    );
  }
}
