/**
 * The ledger's view of the staking pool's positions (table `stakes`: quantity and tier per owner),
 * written inside a caller's transaction as the pool's events are applied. Internal to staking/.
 */
import type { Kysely, Transaction } from 'kysely';
import type { PoolParameters } from '../chain/staking-pool.js';
import type { Tier } from '../chain/tiers.js';
import { isPostgres } from '../db/dialect.js';
import type { Database } from '../db/schema.js';

/** A position as the ledger sees it. */
export type StoredPosition = { userId: string; address: string; quantityWei: bigint; tier: string };

/**
 * The tier a quantity reaches on the pool's ladder, named by the configured ladder at the same
 * rung (the pool knows thresholds and multipliers, not names).
 */
export function poolTier(
  quantityWei: bigint,
  parameters: Pick<PoolParameters, 'tiers'>,
  names: readonly Tier[],
): { index: number; name: string; multiplierBps: bigint } {
  let index = 0;
  parameters.tiers.forEach((t, i) => {
    if (i > 0 && quantityWei >= t.minStakeWei) index = i;
  });
  return {
    index,
    name: tierName(index, names),
    multiplierBps: parameters.tiers[index]?.multiplierBps ?? 10_000n,
  };
}

/** The configured name of the pool's rung `index` (`tier<index>` past the configured ladder). */
export function tierName(index: number, names: readonly Tier[]): string {
  return names[index]?.name ?? `tier${index}`;
}

/**
 * Adds `deltaWei` (negative: takes it) to the user's position, locked for the transaction and
 * created empty if absent, and records the tier the new quantity reaches. Returns the position.
 */
export async function adjustPosition(
  trx: Transaction<Database>,
  { parameters, names }: { parameters: Pick<PoolParameters, 'tiers'>; names: readonly Tier[] },
  user: { id: string; address: string },
  deltaWei: bigint,
  nowMs: number,
): Promise<StoredPosition> {
  await trx
    .insertInto('stakes')
    .values({
      user_id: user.id,
      address: user.address,
      quantity_wei: '0',
      tier: tierName(0, names),
      multiplier_bps: parameters.tiers[0]?.multiplierBps ?? 10_000n,
      // Rewards accrue in the pool; these two columns of the vault era stay at 0.
      index_snapshot: '0',
      accrued_scaled: '0',
      updated_at: nowMs,
    })
    .onConflict((oc) => oc.column('user_id').doNothing())
    .execute();
  let query = trx.selectFrom('stakes').select('quantity_wei').where('user_id', '=', user.id);
  // SQLite serializes writers; PostgreSQL needs the row lock.
  if (isPostgres(trx)) query = query.forUpdate();
  const row = await query.executeTakeFirstOrThrow();
  const quantityWei = BigInt(row.quantity_wei) + deltaWei;
  const tier = poolTier(quantityWei, parameters, names);
  await trx
    .updateTable('stakes')
    .set({
      quantity_wei: quantityWei.toString(),
      tier: tier.name,
      multiplier_bps: tier.multiplierBps,
      updated_at: nowMs,
    })
    .where('user_id', '=', user.id)
    .execute();
  return { userId: user.id, address: user.address, quantityWei, tier: tier.name };
}

/** The ledger's position of an owner's connected wallet (no lock), or null. */
export async function findPositionByAddress(
  db: Kysely<Database>,
  address: string,
): Promise<StoredPosition | null> {
  const row = await db.selectFrom('stakes').selectAll().where('address', '=', address).executeTakeFirst();
  return row
    ? { userId: row.user_id, address: row.address, quantityWei: BigInt(row.quantity_wei), tier: row.tier }
    : null;
}
