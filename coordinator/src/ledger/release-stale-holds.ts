import { type LedgerClock, type LedgerDb, systemLedgerClock } from './db.js';
import { release } from './release.js';
import { RESERVATION_STATUS } from './tables.js';

/** How often the coordinator looks for holds a crashed coordinator left behind. */
export const STALE_HOLD_SWEEP_MS = 60_000;

/**
 * The age past which a hold is a leftover: a request holds at most one job timeout per attempt,
 * plus a sweep period for the ledger's queue.
 */
export function staleHoldAgeMs(router: { maxAttempts: number; jobTimeoutMs: number }): number {
  return router.maxAttempts * router.jobTimeoutMs + STALE_HOLD_SWEEP_MS;
}

/** Holds released per sweep at most (the next sweep takes the rest). */
export const STALE_HOLDS_PER_SWEEP = 1_000;

/**
 * Gives back holds nobody will settle: a request's hold is settled or released within its job
 * timeout plus the ledger's queue, unless the coordinator that held it died (a crash between the
 * reservation and the settlement). Any hold older than `olderThanMs` is such a leftover: it is
 * released whole — the tokens such a request delivered, if any, are not known and not billed.
 * Safe with many replicas and concurrent sweeps: release is idempotent. Returns how many it released.
 */
export async function releaseStaleHolds(
  db: LedgerDb,
  params: { olderThanMs: number; clock?: LedgerClock },
): Promise<number> {
  const clock = params.clock ?? systemLedgerClock;
  const rows = await db
    .selectFrom('ledger_reservations')
    .select('id')
    .where('status', '=', RESERVATION_STATUS.held)
    .where('created_at', '<', clock.now() - params.olderThanMs)
    .orderBy('created_at')
    .limit(STALE_HOLDS_PER_SWEEP)
    .execute();
  let released = 0;
  for (const { id } of rows) if (await release(db, { reservationId: id, clock })) released++;
  return released;
}
