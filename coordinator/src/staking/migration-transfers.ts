/**
 * How the vault migration's steps (migrate-vault.ts) ride the transfer outbox, purpose `pool_migrate`
 * (the ref: the step's id). The staking vault — the pool's migrator — signs the pool calls: a stake
 * (`migrateStake`), an unbonding (`migrateUnbonding`, its release time kept), a slash's tokens
 * (`fundRewards`) and the end (`endMigration`); the rewards vault pays an owner's unpaid vault-era
 * rewards to its proxy wallet (a plain transfer, as that era's claim did). A pool call is simulated
 * before signing, so one the pool would refuse (a migration id credited already, say) is never sent.
 * The step ends with its transfer, in the transaction that records the end: done when mined (an
 * unbonding takes the place of its Migrated event, a slash is sent, a reward recorded as a claim);
 * back to planned when it can never land — after a refusal before signing, not before the back-off
 * recorded on the refused row (chain/refusal-backoff.ts).
 */
import { randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import { type Address, type Hex, keccak256, toBytes } from 'viem';
import { NATIVE_TRANSFER_GAS } from '../chain/constants.js';
import type { ChainServices } from '../chain/create-chain-services.js';
import { enqueueTransfer } from '../chain/enqueue-transfer.js';
import { recordRefusal } from '../chain/refusal-backoff.js';
import { POOL_GAS, type PoolCall, StakingPool } from '../chain/staking-pool.js';
import type { TransferHandler } from '../chain/transfer-types.js';
import type { Clock } from '../clock.js';
import type { Database } from '../db/schema.js';
import type { PoolMigrationStepsTable } from '../db/tables/chain.js';
import { SLASH_STATUS } from '../db/tables/trust.js';
import { ApiError } from '../errors.js';
import { adjustPosition } from './position-store.js';

export const MIGRATION_PURPOSE = 'pool_migrate';

export const STEP_KIND = {
  stake: 'stake',
  unbonding: 'unbonding',
  slash: 'slash',
  reward: 'reward',
  end: 'end',
} as const;
export type StepKind = (typeof STEP_KIND)[keyof typeof STEP_KIND];

export const STEP_STATUS = { planned: 'planned', sending: 'sending', done: 'done' } as const;

export type MigrationStep = Omit<PoolMigrationStepsTable, 'release_at_s' | 'created_at' | 'updated_at'> & {
  release_at_s: string | number | bigint | null;
  created_at: string | number | bigint;
  updated_at: string | number | bigint;
};

/** The pool's migration id of a step: keccak-256 of its id (`stake:<user>`, `unbonding:<id>`). */
export function migrationIdOf(stepId: string): Hex {
  return keccak256(toBytes(stepId));
}

/** The pool call a step makes (a reward's is a plain transfer: none). */
export function stepCall(step: MigrationStep, proxy: Address | undefined): PoolCall | undefined {
  const migrationId = migrationIdOf(step.id);
  switch (step.kind) {
    case STEP_KIND.stake:
      return { fn: 'migrateStake', owner: proxy!, migrationId };
    case STEP_KIND.unbonding:
      return { fn: 'migrateUnbonding', owner: proxy!, migrationId, releaseAtS: BigInt(step.release_at_s!) };
    case STEP_KIND.slash:
      return { fn: 'fundRewards' };
    case STEP_KIND.end:
      return { fn: 'endMigration' };
    default:
      return undefined;
  }
}

/** Inside the step's transaction: its transfer (a pool call by the staking vault, or a reward). */
export function enqueueStep(
  trx: Kysely<Database>,
  services: ChainServices,
  { step, proxy, now }: { step: MigrationStep; proxy: Address | undefined; now: number },
): Promise<string> {
  const amount = BigInt(step.amount_wei);
  const call = stepCall(step, proxy);
  const base = {
    purpose: MIGRATION_PURPOSE,
    ref: step.id,
    asset: 'native',
    amount,
    valueWei: amount,
    now,
  } as const;
  if (!call) {
    return enqueueTransfer(trx, {
      ...base,
      from: services.rewardsVault!.address,
      to: proxy!,
      gas: NATIVE_TRANSFER_GAS,
    });
  }
  const pool = services.stakingPool!;
  return enqueueTransfer(trx, {
    ...base,
    from: services.stakingVault!.address,
    to: pool.address,
    data: StakingPool.encode(call),
    gas: POOL_GAS[call.fn],
  });
}

/** The `pool_migrate` use of the transfer outbox. */
export function migrationTransfers({
  db,
  services,
  clock,
}: {
  db: Kysely<Database>;
  services: ChainServices;
  clock: Clock;
}): TransferHandler {
  const isReward = (from: string) => from === services.rewardsVault?.address;
  return {
    withReceipt: true,
    async signer(transfer) {
      const vault = isReward(transfer.from_address) ? services.rewardsVault : services.stakingVault;
      if (!vault?.account) throw new ApiError('chain_unavailable', 'The vault key is not configured here.');
      return vault.account;
    },
    async precheck(transfer) {
      const pool = services.stakingPool;
      if (!pool || !transfer.data) return;
      await pool.simulate({
        from: transfer.from_address as Address,
        data: transfer.data as Hex,
        value: BigInt(transfer.value_wei),
        gas: BigInt(transfer.gas),
      });
    },
    async settle(trx, transfer, outcome, receipt) {
      const nowMs = clock.now();
      const step = await trx
        .selectFrom('pool_migration_steps')
        .selectAll()
        .where('id', '=', transfer.ref)
        .where('transfer_id', '=', transfer.id)
        .executeTakeFirst();
      if (!step) return;
      if (outcome !== 'mined') {
        if (outcome === 'cancelled') await recordRefusal(trx, transfer, nowMs);
        await setStep(trx, step.id, { status: STEP_STATUS.planned, transfer_id: null, updated_at: nowMs });
        return;
      }
      await setStep(trx, step.id, { status: STEP_STATUS.done, tx_hash: transfer.tx_hash, updated_at: nowMs });
      await applyStep(trx, { db, services, nowMs }, step, transfer.tx_hash as Hex, receipt?.logs ?? []);
    },
  };
}

function setStep(
  trx: Transaction<Database>,
  id: string,
  set: { status: string; transfer_id?: string | null; tx_hash?: string | null; updated_at: number },
) {
  return trx.updateTable('pool_migration_steps').set(set).where('id', '=', id).execute();
}

/** What a mined step changes in the ledger (the position itself was counted in the vault era). */
async function applyStep(
  trx: Transaction<Database>,
  { services, nowMs }: { db: Kysely<Database>; services: ChainServices; nowMs: number },
  step: MigrationStep,
  txHash: Hex,
  logs: Parameters<StakingPool['events']>[0],
): Promise<void> {
  const pool = services.stakingPool!;
  switch (step.kind) {
    case STEP_KIND.stake: {
      // The tier as the pool's ladder names it (the quantity is the vault era's, now the pool's).
      const user = await trx
        .selectFrom('users')
        .select(['id', 'address'])
        .where('id', '=', step.user_id!)
        .executeTakeFirstOrThrow();
      await adjustPosition(
        trx,
        { parameters: await pool.parameters(), names: services.tiers },
        user,
        0n,
        nowMs,
      );
      break;
    }
    case STEP_KIND.unbonding: {
      // Where the pool keeps it now: its Migrated event's place and release time (slash and
      // withdraw order the ledger's unbondings by it, as the pool's queue).
      const event = pool.events(logs).find((e) => e.eventName === 'Migrated');
      if (event?.eventName !== 'Migrated') break;
      await trx
        .updateTable('unbondings')
        .set({
          chain_pos: event.blockNumber * 1_000_000n + BigInt(event.logIndex),
          release_at: Number(event.args.releaseAt) * 1000,
        })
        .where('id', '=', step.ref!)
        .execute();
      break;
    }
    case STEP_KIND.slash: {
      const sent = await trx
        .updateTable('slashes')
        .set({ status: SLASH_STATUS.sent, tx_hash: txHash, raw_tx: null, updated_at: nowMs })
        .where('id', '=', step.ref!)
        .returning('stake_event_id')
        .executeTakeFirst();
      if (sent?.stake_event_id) {
        await trx
          .updateTable('stake_events')
          .set({ tx_hash: txHash })
          .where('id', '=', sent.stake_event_id)
          .execute();
      }
      break;
    }
    case STEP_KIND.reward:
      await trx
        .insertInto('stake_events')
        .values({
          id: randomUUID(),
          user_id: step.user_id!,
          kind: 'claim',
          amount_wei: step.amount_wei,
          tx_hash: txHash,
          created_at: nowMs,
        })
        .execute();
      break;
  }
}
