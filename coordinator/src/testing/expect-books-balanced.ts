import type { Kysely } from 'kysely';
import { createChainServices } from '../chain/create-chain-services.js';
import type { CoordinatorConfig } from '../config.js';
import type { Database } from '../db/schema.js';
import type { Ledger } from '../ledger/ledger.js';
import { staleHoldAgeMs } from '../ledger/stale-holds.js';
import { reconcile } from '../reconcile/reconcile.js';

/**
 * The reconciliation check at the end of an end-to-end suite: waits for queued settlements, runs
 * `reconcile` over the store (and the chain, when `config` names one) and throws, listing every
 * difference, unless the books hold. Pass the app's context (`app.ctx`) while it runs, or just the
 * store's `db` once the app closed (its ledger then has nothing queued).
 */
export async function expectBooksBalanced(
  { db, ledger }: { db: Kysely<Database>; ledger?: Pick<Ledger, 'idle'> },
  config?: Pick<CoordinatorConfig, 'chain' | 'staking' | 'router'>,
): Promise<void> {
  await ledger?.idle();
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
