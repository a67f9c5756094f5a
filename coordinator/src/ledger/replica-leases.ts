/**
 * Replica leases: each coordinator replica renews a lease row while it runs, and tags the holds
 * its requests take with its id. A replica whose lease ran out died (kill -9, a lost machine)
 * between its holds and their settlements: the survivors release those holds within seconds
 * instead of waiting for the stale-hold age (stale-holds.ts). A replica alive but cut off from the
 * database can't renew — nor settle: its late settlement of a released hold finds it gone and
 * moves nothing (settle.ts), so no money is created or lost twice.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { RESERVATION_STATUS } from '../db/tables/ledger.js';

/** How long after its last renewal a replica counts as dead. */
export const REPLICA_LEASE_MS = 6_000;
/** How often a replica renews its lease. */
export const REPLICA_RENEW_MS = 1_000;
/** How often a replica looks for the holds of dead ones. */
export const ORPHANED_HOLD_SWEEP_MS = 2_000;
/** Holds released per sweep at most (the next sweep takes the rest). */
const ORPHANED_HOLDS_PER_SWEEP = 1_000;

/** Extends this replica's lease to `now + REPLICA_LEASE_MS`. */
export async function renewLease(db: Kysely<Database>, replicaId: string, now: number): Promise<void> {
  const expiresAt = now + REPLICA_LEASE_MS;
  await db
    .insertInto('replica_leases')
    .values({ replica_id: replicaId, expires_at: expiresAt })
    .onConflict((oc) => oc.column('replica_id').doUpdateSet({ expires_at: expiresAt }))
    .execute();
}

/** Ends this replica's lease (it is closing): its leftover holds are released at once by the others. */
export async function dropLease(db: Kysely<Database>, replicaId: string): Promise<void> {
  await db.deleteFrom('replica_leases').where('replica_id', '=', replicaId).execute();
}

/** Open holds of replicas other than `self` whose lease ran out (or was dropped). */
export async function findOrphanedHolds(db: Kysely<Database>, self: string, now: number): Promise<string[]> {
  const rows = await db
    .selectFrom('ledger_reservations as r')
    .select('r.id')
    .where('r.status', '=', RESERVATION_STATUS.held)
    .where('r.holder', 'is not', null)
    .where('r.holder', '<>', self)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('replica_leases as l')
            .select('l.replica_id')
            .whereRef('l.replica_id', '=', 'r.holder')
            .where('l.expires_at', '>=', now),
        ),
      ),
    )
    .orderBy('r.created_at')
    .limit(ORPHANED_HOLDS_PER_SWEEP)
    .execute();
  return rows.map((row) => row.id);
}
