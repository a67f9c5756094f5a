/**
 * The vault migration's plan (migrate-vault.ts): what of the vault era is still to move into the
 * staking pool, written once, in one transaction, as steps (table `pool_migration_steps`) — so a
 * restart resumes the same plan and never computes a second one:
 * - `stake:<user>`: the ledger's staked quantity the pool does not hold for the owner's proxy wallet;
 * - `unbonding:<id>`: each open unbonding of that era (no place on the chain yet), oldest release
 *   first, with its release time (never later than the pool's own period from now);
 * - `slash:<id>`: a slash the ledger cut whose tokens never left the vault (to the rewards pool);
 * - `reward:<user>`: the owner's unpaid rewards of that era (whole wei; the fraction stays accrued);
 * - `end`: the pool's `endMigration`, last.
 */
import type { Kysely } from 'kysely';
import { getAddress } from 'viem';
import type { ChainServices } from '../chain/create-chain-services.js';
import type { StakingPool } from '../chain/staking-pool.js';
import type { Clock } from '../clock.js';
import { toBigInt } from '../db/bigint.js';
import type { Database } from '../db/schema.js';
import { UNBONDING_STATUS } from '../db/tables/chain.js';
import { SLASH_STATUS } from '../db/tables/trust.js';
import { VAULT_REWARD_SCALE } from './legacy-transfers.js';
import { STEP_KIND, STEP_STATUS, type StepKind } from './migration-transfers.js';

/** Whether the ledger holds anything of the vault era (its stake events have no chain position). */
export async function hasVaultEra(db: Kysely<Database>): Promise<boolean> {
  const found = await db
    .selectFrom('stake_events')
    .select('id')
    .where('id', 'not like', '0x%')
    .limit(1)
    .executeTakeFirst();
  return found !== undefined;
}

type PlannedStep = {
  id: string;
  kind: StepKind;
  user_id: string | null;
  ref: string | null;
  amountWei: bigint;
  releaseAtS?: bigint;
};

/**
 * Writes the plan for `pool` (nothing if another process wrote it first). Returns how many steps.
 * The owners' unpaid rewards stop accruing in the ledger here: they become `reward` steps.
 */
export async function planVaultMigration(
  { db, services, clock }: { db: Kysely<Database>; services: ChainServices; clock: Clock },
  pool: StakingPool,
): Promise<number> {
  const nowMs = clock.now();
  const [{ unbondingPeriodS }, poolNowS] = await Promise.all([pool.parameters(), pool.now()]);
  const steps: PlannedStep[] = [];
  const rewards: { userId: string; accruedScaled: bigint; indexValue: bigint }[] = [];
  const index = await rewardIndexNow(db, nowMs);
  const stakes = await db
    .selectFrom('stakes as s')
    .innerJoin('wallets as w', 'w.user_id', 's.user_id')
    .select(['s.user_id', 's.quantity_wei', 's.multiplier_bps', 's.index_snapshot', 's.accrued_scaled'])
    .select('w.proxy_address')
    .execute();
  for (const s of stakes) {
    const quantity = BigInt(s.quantity_wei);
    const inPool = (await pool.position(getAddress(s.proxy_address))).staked;
    if (quantity > inPool) {
      steps.push({
        id: `stake:${s.user_id}`,
        kind: STEP_KIND.stake,
        user_id: s.user_id,
        ref: null,
        amountWei: quantity - inPool,
      });
    }
    const snapshot = BigInt(s.index_snapshot);
    const grown = index > snapshot ? index - snapshot : 0n;
    const accrued = BigInt(s.accrued_scaled) + quantity * grown * toBigInt(s.multiplier_bps);
    const wholeWei = accrued / VAULT_REWARD_SCALE;
    if (accrued > 0n)
      rewards.push({
        userId: s.user_id,
        accruedScaled: accrued - wholeWei * VAULT_REWARD_SCALE,
        indexValue: index > snapshot ? index : snapshot,
      });
    if (wholeWei > 0n && services.rewardsVault) {
      steps.push({
        id: `reward:${s.user_id}`,
        kind: STEP_KIND.reward,
        user_id: s.user_id,
        ref: null,
        amountWei: wholeWei,
      });
    }
  }
  const unbondings = await db
    .selectFrom('unbondings')
    .select(['id', 'user_id', 'amount_wei', 'release_at'])
    .where('status', '=', UNBONDING_STATUS.unbonding)
    .where('chain_pos', 'is', null)
    .orderBy('release_at')
    .execute();
  const latestS = poolNowS + unbondingPeriodS;
  for (const u of unbondings) {
    const releaseS = (toBigInt(u.release_at) + 999n) / 1000n;
    steps.push({
      id: `unbonding:${u.id}`,
      kind: STEP_KIND.unbonding,
      user_id: u.user_id,
      ref: u.id,
      amountWei: BigInt(u.amount_wei),
      releaseAtS: releaseS < latestS ? releaseS : latestS,
    });
  }
  const slashes = await db
    .selectFrom('slashes')
    .select(['id', 'amount_wei'])
    .where('status', 'in', [SLASH_STATUS.signing, SLASH_STATUS.signed])
    .where('stake_event_id', 'is not', null)
    .execute();
  for (const s of slashes) {
    const amount = BigInt(s.amount_wei ?? '0');
    if (amount > 0n)
      steps.push({ id: `slash:${s.id}`, kind: STEP_KIND.slash, user_id: null, ref: s.id, amountWei: amount });
  }
  const moving = steps.filter((s) => s.kind !== STEP_KIND.reward).length > 0;
  if (moving) steps.push({ id: 'end', kind: STEP_KIND.end, user_id: null, ref: null, amountWei: 0n });
  return db.transaction().execute(async (trx) => {
    const taken = await trx
      .insertInto('pool_migrations')
      .values({
        pool: pool.address,
        vault: services.stakingVault!.address,
        status: steps.length > 0 ? 'moving' : 'done',
        created_at: nowMs,
        updated_at: nowMs,
      })
      .onConflict((oc) => oc.column('pool').doNothing())
      .returning('pool')
      .executeTakeFirst();
    if (!taken) return 0;
    // created_at orders the steps: stakes and rewards, unbondings by release time, slashes, the end.
    let order = nowMs;
    for (const step of steps) {
      await trx
        .insertInto('pool_migration_steps')
        .values({
          id: step.id,
          pool: pool.address,
          kind: step.kind,
          user_id: step.user_id,
          ref: step.ref,
          amount_wei: step.amountWei.toString(),
          release_at_s: step.releaseAtS ?? null,
          status: STEP_STATUS.planned,
          transfer_id: null,
          tx_hash: null,
          created_at: order++,
          updated_at: nowMs,
        })
        .execute();
    }
    for (const r of rewards) {
      await trx
        .updateTable('stakes')
        .set({ accrued_scaled: r.accruedScaled.toString(), index_snapshot: r.indexValue.toString() })
        .where('user_id', '=', r.userId)
        .execute();
    }
    return steps.length;
  });
}

/** The vault era's global reward index now: its value, grown by its APY every second since. */
async function rewardIndexNow(db: Kysely<Database>, nowMs: number): Promise<bigint> {
  const row = await db.selectFrom('reward_index').selectAll().where('id', '=', 'global').executeTakeFirst();
  if (!row) return 0n;
  const nowS = BigInt(Math.floor(nowMs / 1000));
  const atS = toBigInt(row.at_s);
  return BigInt(row.value) + (nowS > atS ? toBigInt(row.apy_bps) * (nowS - atS) : 0n);
}
