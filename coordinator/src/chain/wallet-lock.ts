import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { getAddress } from 'viem';
import type { Database } from '../db/schema.js';
import { ApiError } from '../errors.js';

/** How long a lease lasts without its holder: longer than any check-then-send (a few RPC calls). */
export const WALLET_LEASE_MS = 60_000;
/** How long a caller waits for another replica's lease before answering wallet_busy. */
export const WALLET_LOCK_WAIT_MS = 30_000;
/** How often a waiting caller tries again (jittered by up to as much again). */
export const WALLET_LOCK_POLL_MS = 15;

/**
 * A lock per service wallet that every replica on the database shares. It guards every
 * check-then-act on a wallet (withdraw limit and balance, stake, payout, crediting a deposit) and
 * the nonce taken under it, which a per-process queue alone cannot do once two replicas serve the
 * same user.
 */
export type WalletLock = {
  /** Runs `task` while holding `address`'s lease; the lease is given back when it settles. */
  hold<T>(address: string, task: () => Promise<T>): Promise<T>;
};

/**
 * A lease row per wallet (`wallet_locks`), taken by one upsert that succeeds only when the row is
 * absent or expired, so it needs no connection held open (an advisory lock would pin one pool
 * connection per busy wallet, and the task's own queries could then starve the pool). The holder
 * renews its lease every third of `leaseMs` while its task runs; one that crashed leaves a lease
 * that expires after `leaseMs`. Wall-clock time, not the app's clock:
 * replicas must agree on it, and a test's frozen clock must not freeze a lease.
 */
export function createWalletLock(
  db: Kysely<Database>,
  { leaseMs = WALLET_LEASE_MS, waitMs = WALLET_LOCK_WAIT_MS } = {},
): WalletLock {
  const tryAcquire = async (address: string, holder: string): Promise<boolean> => {
    const now = Date.now();
    const row = await db
      .insertInto('wallet_locks')
      .values({ address, holder, expires_at: now + leaseMs })
      .onConflict((oc) =>
        oc
          .column('address')
          .doUpdateSet({ holder, expires_at: now + leaseMs })
          .where('wallet_locks.expires_at', '<', now),
      )
      .returning('holder')
      .executeTakeFirst();
    return row?.holder === holder;
  };
  return {
    async hold<T>(rawAddress: string, task: () => Promise<T>): Promise<T> {
      const address = getAddress(rawAddress);
      const holder = randomUUID();
      const deadline = Date.now() + waitMs;
      while (!(await tryAcquire(address, holder))) {
        if (Date.now() > deadline) throw new ApiError('wallet_busy', undefined, { retryAfterS: 1 });
        await new Promise((r) => setTimeout(r, WALLET_LOCK_POLL_MS * (1 + Math.random())));
      }
      // Renewed while the task runs, so a slow chain (RPC timeouts add up) cannot outlast the lease
      // and let another replica in; only a holder that died stops renewing.
      const renew = setInterval(() => {
        db.updateTable('wallet_locks')
          .set({ expires_at: Date.now() + leaseMs })
          .where('address', '=', address)
          .where('holder', '=', holder)
          .execute()
          .catch(() => {});
      }, leaseMs / 3);
      renew.unref();
      try {
        return await task();
      } finally {
        clearInterval(renew);
        await db
          .deleteFrom('wallet_locks')
          .where('address', '=', address)
          .where('holder', '=', holder)
          .execute();
      }
    },
  };
}
