/**
 * Reads and writes of staking positions and the global reward index, inside a caller's
 * transaction. Internal to staking/: every exported operation settles through these.
 */
import type { Kysely, Transaction } from 'kysely';
import type { ChainServices } from '../chain/create-chain-services.js';
import { tierFor } from '../chain/tiers.js';
import { toBigInt } from '../db/bigint.js';
import { isPostgres } from '../db/dialect.js';
import type { Database } from '../db/schema.js';
import { checkpointRewardIndex, type RewardIndex, rewardIndexAt, type StakePosition } from './rewards.js';

export const GLOBAL_INDEX_ID = 'global';

export type StoredPosition = StakePosition & { userId: string; address: string; tier: string };

/** Seconds since the epoch of a clock reading (rewards accrue per whole second). */
export function toSeconds(nowMs: number): bigint {
  return BigInt(Math.floor(nowMs / 1000));
}

/** The stored global index (not yet written: the first write creates it at `nowS`). */
export async function readRewardIndex(
  db: Kysely<Database>,
  services: ChainServices,
  nowS: bigint,
): Promise<RewardIndex> {
  const row = await db
    .selectFrom('reward_index')
    .selectAll()
    .where('id', '=', GLOBAL_INDEX_ID)
    .executeTakeFirst();
  if (!row) return { value: 0n, atS: nowS, apyBps: services.baseApyBps };
  return { value: BigInt(row.value), atS: toBigInt(row.at_s), apyBps: toBigInt(row.apy_bps) };
}

/**
 * The index value at `nowS`. Creates the row on first use, and re-anchors it when the configured
 * APY changed (the new rate applies from this second on). O(1).
 */
export async function currentRewardIndex(
  trx: Transaction<Database>,
  services: ChainServices,
  nowS: bigint,
): Promise<bigint> {
  const stored = await trx
    .selectFrom('reward_index')
    .selectAll()
    .where('id', '=', GLOBAL_INDEX_ID)
    .executeTakeFirst();
  if (!stored) {
    await trx
      .insertInto('reward_index')
      .values({ id: GLOBAL_INDEX_ID, value: '0', at_s: nowS, apy_bps: services.baseApyBps })
      .onConflict((oc) => oc.column('id').doNothing())
      .execute();
    return currentRewardIndex(trx, services, nowS);
  }
  const index: RewardIndex = {
    value: BigInt(stored.value),
    atS: toBigInt(stored.at_s),
    apyBps: toBigInt(stored.apy_bps),
  };
  if (index.apyBps !== services.baseApyBps) {
    const next = checkpointRewardIndex(index, nowS, services.baseApyBps);
    // Conditional on the row we read, so two replicas re-anchoring at once cannot both apply.
    await trx
      .updateTable('reward_index')
      .set({ value: next.value.toString(), at_s: next.atS, apy_bps: next.apyBps })
      .where('id', '=', GLOBAL_INDEX_ID)
      .where('value', '=', stored.value)
      .where('apy_bps', '=', stored.apy_bps)
      .execute();
    return rewardIndexAt(next, nowS);
  }
  return rewardIndexAt(index, nowS);
}

/** The user's position, locked for the transaction; created empty at `indexValue` if absent. */
export async function lockPosition(
  trx: Transaction<Database>,
  services: ChainServices,
  user: { id: string; address: string },
  indexValue: bigint,
  nowMs: number,
): Promise<StoredPosition> {
  const none = tierFor(0n, services.tiers);
  await trx
    .insertInto('stakes')
    .values({
      user_id: user.id,
      address: user.address,
      quantity_wei: '0',
      tier: none.name,
      multiplier_bps: BigInt(none.multiplierBps),
      index_snapshot: indexValue.toString(),
      accrued_scaled: '0',
      updated_at: nowMs,
    })
    .onConflict((oc) => oc.column('user_id').doNothing())
    .execute();
  let query = trx.selectFrom('stakes').selectAll().where('user_id', '=', user.id);
  // SQLite serializes writers; PostgreSQL needs the row lock.
  if (isPostgres(trx)) query = query.forUpdate();
  const row = await query.executeTakeFirstOrThrow();
  return rowToPosition(row);
}

/** Reads a position by its owner's address (no lock), or null. */
export async function findPositionByAddress(
  db: Kysely<Database>,
  address: string,
): Promise<StoredPosition | null> {
  const row = await db.selectFrom('stakes').selectAll().where('address', '=', address).executeTakeFirst();
  return row ? rowToPosition(row) : null;
}

/** Writes a settled position back, with the tier and multiplier its quantity now reaches. */
export async function savePosition(
  trx: Transaction<Database>,
  services: ChainServices,
  position: StoredPosition,
  nowMs: number,
): Promise<StoredPosition> {
  const tier = tierFor(position.quantityWei, services.tiers);
  const next: StoredPosition = { ...position, tier: tier.name, multiplierBps: BigInt(tier.multiplierBps) };
  await trx
    .updateTable('stakes')
    .set({
      quantity_wei: next.quantityWei.toString(),
      tier: next.tier,
      multiplier_bps: next.multiplierBps,
      index_snapshot: next.indexSnapshot.toString(),
      accrued_scaled: next.accruedScaled.toString(),
      updated_at: nowMs,
    })
    .where('user_id', '=', position.userId)
    .execute();
  return next;
}

function rowToPosition(row: {
  user_id: string;
  address: string;
  quantity_wei: string;
  tier: string;
  multiplier_bps: bigint | number | string;
  index_snapshot: string;
  accrued_scaled: string;
}): StoredPosition {
  return {
    userId: row.user_id,
    address: row.address,
    tier: row.tier,
    quantityWei: BigInt(row.quantity_wei),
    multiplierBps: toBigInt(row.multiplier_bps),
    indexSnapshot: BigInt(row.index_snapshot),
    accruedScaled: BigInt(row.accrued_scaled),
  };
}
