/**
 * Moves the vault era's stake into the staking pool (issue 43, part 4), run when the coordinator
 * starts and on the release timer until it is done; idempotent and crash-safe. A coordinator of that
 * era held stake in its staking vault (an account whose key it holds); the pool's migrator, fixed at
 * its deployment, is that vault. One pass goes as far as it can:
 * 1. the open transfers of that era's outbox purposes end (legacy-transfers.ts: finished from their
 *    stored bytes when signed, mapped to the pool when never signed) — until none is open, nothing
 *    else moves;
 * 2. the plan is written once (plan-vault-migration.ts): one step per stake, unbonding, slash and
 *    unpaid reward, then the pool's `endMigration`;
 * 3. each step is sent through the transfer outbox (migration-transfers.ts): the step and its
 *    transfer are written in one transaction, the transfer's signed bytes are stored before they
 *    are broadcast, and the step ends in the transaction that records the transfer's end. A crash
 *    anywhere leaves a step planned (nothing sent) or sending (its transfer open: the outbox finishes
 *    it from the stored bytes); the pool credits each migration id once besides, and a step whose id
 *    the pool already credited is done without sending anything.
 * While it is not done, the release and slash timers wait (compose/register-chain.ts): neither may
 * act on a position the pool does not hold yet.
 */
import type { Kysely } from 'kysely';
import { type Address, getAddress, type Hex } from 'viem';
import type { ChainServices } from '../chain/create-chain-services.js';
import { lookupTransaction } from '../chain/lookup-transaction.js';
import { refusedUntil } from '../chain/refusal-backoff.js';
import type { TransferOutbox } from '../chain/transfer-outbox.js';
import type { OutboxLog } from '../chain/transfer-types.js';
import type { Clock } from '../clock.js';
import type { Database } from '../db/schema.js';
import { OPEN_TRANSFER, UNBONDING_STATUS } from '../db/tables/chain.js';
import { LEGACY_PURPOSES } from './legacy-transfers.js';
import {
  enqueueStep,
  MIGRATION_PURPOSE,
  type MigrationStep,
  migrationIdOf,
  STEP_KIND,
  STEP_STATUS,
} from './migration-transfers.js';
import { hasVaultEra, planVaultMigration } from './plan-vault-migration.js';

export type MigrationDeps = {
  db: Kysely<Database>;
  services: ChainServices;
  clock: Clock;
  /** The outbox, with the legacy and `pool_migrate` purposes registered. */
  outbox: TransferOutbox;
  log: OutboxLog;
};

/**
 * none: nothing of the vault era here · unavailable: there is, but this pool cannot take it (no
 * migrator, another one, ended) or the vault's key is missing · waiting: an open transfer or a
 * step is not finished yet (the next pass goes on) · done.
 */
export type MigrationStatus = 'none' | 'unavailable' | 'waiting' | 'done';
export type MigrationReport = { status: MigrationStatus; moved: number };

/** Tests stop a pass here: a hook that never resolves is a process that died between two steps. */
export type MigrationHooks = { afterStep?: (step: MigrationStep) => Promise<void> | void };

/** One pass of the migration (see the file's comment). */
export async function migrateVault(
  deps: MigrationDeps,
  hooks: MigrationHooks = {},
): Promise<MigrationReport> {
  const { db, services, log } = deps;
  const pool = services.stakingPool;
  if (!pool) return { status: 'none', moved: 0 };
  const record = await db
    .selectFrom('pool_migrations')
    .select('status')
    .where('pool', '=', pool.address)
    .executeTakeFirst();
  if (record?.status === 'done') return { status: 'done', moved: 0 };
  if (!record) {
    if (!(await hasVaultEra(db))) return { status: 'none', moved: 0 };
    const vault = services.stakingVault;
    const { migrator, ended } = await pool.migration();
    if (!vault?.account || migrator !== vault.address || ended) {
      log.error(
        { pool: pool.address, migrator, vault: vault?.address, ended, keyed: Boolean(vault?.account) },
        'vault migration: the staking vault holds stake, but cannot move it into this pool (see coordinator/README.md, "Migration from the staking vault")',
      );
      return { status: 'unavailable', moved: 0 };
    }
    if (!(await endLegacyTransfers(deps))) return { status: 'waiting', moved: 0 };
    await planVaultMigration(deps, pool);
  }
  return runSteps(deps, pool.address, hooks);
}

/** Ends that era's open transfers; true when none is open. */
async function endLegacyTransfers({ db, outbox, services }: MigrationDeps): Promise<boolean> {
  const open = () =>
    db
      .selectFrom('chain_transfers')
      .select('id')
      .where('purpose', 'in', Object.values(LEGACY_PURPOSES))
      .where('status', 'in', OPEN_TRANSFER)
      .orderBy('created_at')
      .execute();
  for (const { id } of await open()) await outbox.process(id);
  // Releases that era left `releasing` without a transfer: paid if their transaction was mined.
  const stranded = await db
    .selectFrom('unbondings as u')
    .select(['u.id', 'u.tx_hash'])
    .where('u.status', '=', UNBONDING_STATUS.releasing)
    .where('u.chain_pos', 'is', null)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('chain_transfers as t')
            .select('t.id')
            .whereRef('t.ref', '=', 'u.id')
            .where('t.status', 'in', OPEN_TRANSFER),
        ),
      ),
    )
    .execute();
  for (const u of stranded) {
    const found = u.tx_hash ? await lookupTransaction(services.context.client, u.tx_hash as Hex) : 'unknown';
    await db
      .updateTable('unbondings')
      .set(
        found === 'success'
          ? { status: UNBONDING_STATUS.released }
          : { status: UNBONDING_STATUS.unbonding, tx_hash: null },
      )
      .where('id', '=', u.id)
      .where('status', '=', UNBONDING_STATUS.releasing)
      .execute();
  }
  return (await open()).length === 0;
}

/** Sends every step not done, in the plan's order, the end last; done when all are. */
async function runSteps(deps: MigrationDeps, pool: Address, hooks: MigrationHooks): Promise<MigrationReport> {
  const { db, clock } = deps;
  const steps = (await db
    .selectFrom('pool_migration_steps')
    .selectAll()
    .where('pool', '=', pool)
    .where('status', '!=', STEP_STATUS.done)
    .orderBy('created_at')
    .execute()) as MigrationStep[];
  let moved = 0;
  for (const step of steps) {
    if (step.kind === STEP_KIND.end && steps.some((s) => s !== step && s.status !== STEP_STATUS.done)) break;
    if (await runStep(deps, step)) {
      moved++;
      step.status = STEP_STATUS.done;
    }
    await hooks.afterStep?.(step);
  }
  const left = await db
    .selectFrom('pool_migration_steps')
    .select('id')
    .where('pool', '=', pool)
    .where('status', '!=', STEP_STATUS.done)
    .executeTakeFirst();
  if (left) return { status: 'waiting', moved };
  await db
    .updateTable('pool_migrations')
    .set({ status: 'done', updated_at: clock.now() })
    .where('pool', '=', pool)
    .execute();
  return { status: 'done', moved };
}

/** Carries one step as far as it goes now; true when it is done. */
async function runStep(deps: MigrationDeps, step: MigrationStep): Promise<boolean> {
  const { db, services, clock, outbox, log } = deps;
  const pool = services.stakingPool!;
  let transferId = step.status === STEP_STATUS.sending ? step.transfer_id : null;
  if (!transferId) {
    const now = clock.now();
    if (await refusedUntil(db, { purpose: MIGRATION_PURPOSE, ref: step.id, nowMs: now })) return false;
    if (await creditedAlready(deps, step)) return true;
    const proxy = step.user_id ? await proxyOf(db, step.user_id) : undefined;
    if (step.user_id && !proxy) {
      log.error({ step: step.id }, 'vault migration: the owner has no proxy wallet; the step waits');
      return false;
    }
    transferId = await db.transaction().execute(async (trx) => {
      const id = await enqueueStep(trx, services, { step, proxy, now });
      const taken = await trx
        .updateTable('pool_migration_steps')
        .set({ status: STEP_STATUS.sending, transfer_id: id, updated_at: now })
        .where('id', '=', step.id)
        .where('status', '=', STEP_STATUS.planned)
        .executeTakeFirst();
      if (taken.numUpdatedRows === 1n) return id;
      await trx.deleteFrom('chain_transfers').where('id', '=', id).execute();
      return null;
    });
    if (!transferId) return false;
  }
  await pool.parameters();
  const { error } = await outbox.process(transferId);
  if (error) log.warn({ step: step.id, code: error.code }, 'vault migration: the step is not done yet');
  const after = await db
    .selectFrom('pool_migration_steps')
    .select('status')
    .where('id', '=', step.id)
    .executeTakeFirstOrThrow();
  return after.status === STEP_STATUS.done;
}

/**
 * A stake or unbonding whose migration id the pool credited already, or an end the pool has:
 * done, nothing sent (the outbox records every send, so this is a second line of defence).
 */
async function creditedAlready(
  { db, services, clock }: MigrationDeps,
  step: MigrationStep,
): Promise<boolean> {
  const kinds: string[] = [STEP_KIND.stake, STEP_KIND.unbonding, STEP_KIND.end];
  if (!kinds.includes(step.kind)) return false;
  const state = await services.stakingPool!.migration(migrationIdOf(step.id));
  if (!(step.kind === STEP_KIND.end ? state.ended : state.migrated)) return false;
  const result = await db
    .updateTable('pool_migration_steps')
    .set({ status: STEP_STATUS.done, updated_at: clock.now() })
    .where('id', '=', step.id)
    .where('status', '=', STEP_STATUS.planned)
    .executeTakeFirst();
  return result.numUpdatedRows === 1n;
}

async function proxyOf(db: Kysely<Database>, userId: string): Promise<Address | undefined> {
  const row = await db
    .selectFrom('wallets')
    .select('proxy_address')
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return row ? getAddress(row.proxy_address) : undefined;
}
