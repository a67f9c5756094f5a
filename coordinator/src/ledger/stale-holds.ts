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
