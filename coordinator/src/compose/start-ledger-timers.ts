import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app-context.js';
import { ORPHANED_HOLD_SWEEP_MS, REPLICA_RENEW_MS } from '../ledger/replica-leases.js';
import { STALE_HOLD_SWEEP_MS, staleHoldAgeMs } from '../ledger/stale-holds.js';

/**
 * The ledger's timers: the sweep of holds an interrupted request left, and this replica's lease
 * (with the release of the holds of replicas whose lease ran out). The ledger itself closes with
 * the app (buildApp).
 */
export function startLedgerTimers(app: FastifyInstance, ctx: AppContext): void {
  sweepStaleHolds(app, ctx);
  keepReplicaLease(app, ctx);
}

/**
 * Releases the holds a coordinator that died mid-request left behind: at start, then every
 * STALE_HOLD_SWEEP_MS. A hold lives at most one job timeout per attempt plus the ledger's queue.
 */
function sweepStaleHolds(app: FastifyInstance, ctx: AppContext): void {
  const sweep = async () => {
    const released = await ctx.ledger
      .releaseStaleHolds(staleHoldAgeMs(ctx.config.router))
      .catch((error: unknown) => {
        app.log.error({ err: error }, 'stale hold sweep failed');
        return 0;
      });
    if (released > 0) app.log.warn({ released }, 'released holds left by an interrupted request');
  };
  let timer: NodeJS.Timeout | undefined;
  app.addHook('onReady', async () => {
    await sweep();
    timer = setInterval(() => void sweep(), STALE_HOLD_SWEEP_MS).unref();
  });
  app.addHook('preClose', async () => clearInterval(timer));
}

/**
 * Keeps this replica's lease (ledger/replica-leases.ts) and releases the holds of replicas whose
 * lease ran out: renewed every REPLICA_RENEW_MS, swept every ORPHANED_HOLD_SWEEP_MS, dropped on
 * close (its leftover holds are then the others' to release at once).
 */
function keepReplicaLease(app: FastifyInstance, ctx: AppContext): void {
  const renew = () =>
    ctx.ledger
      .renewLease()
      .catch((error: unknown) => app.log.error({ err: error }, 'renewing the replica lease failed'));
  const sweep = async () => {
    const released = await ctx.ledger.releaseOrphanedHolds().catch((error: unknown) => {
      app.log.error({ err: error }, 'orphaned hold sweep failed');
      return 0;
    });
    if (released > 0) app.log.warn({ released }, 'released the holds of a replica that stopped');
  };
  const timers: NodeJS.Timeout[] = [];
  app.addHook('onReady', async () => {
    await ctx.ledger.renewLease();
    timers.push(setInterval(() => void renew(), REPLICA_RENEW_MS).unref());
    timers.push(setInterval(() => void sweep(), ORPHANED_HOLD_SWEEP_MS).unref());
  });
  app.addHook('preClose', async () => {
    for (const timer of timers) clearInterval(timer);
  });
  app.addHook('onClose', async () => {
    await ctx.ledger
      .dropLease()
      .catch((error: unknown) => app.log.error({ err: error }, 'dropping the replica lease failed'));
  });
}
