/**
 * The vault migration (issue 43, part 4) on a real anvil, on SQLite and PostgreSQL: a coordinator's
 * books as the vault era left them (test/support/vault-era.ts: three owners, one unbonding waiting,
 * one due with its release pending in the outbox, a slash and a reward claim pending) and a staking
 * pool whose migrator is the staking vault. reconcile reports every owner's position missing from the
 * pool. The migration runs and dies between two steps (a hook that never returns); a second process
 * dies after broadcasting the next step (its end never recorded); a third — new outbox, new signer
 * queue — finishes. Then every position is in the pool once (one Migrated event per stake and
 * unbonding, with the vault era's release time), the vault paid exactly what it owed plus gas, the
 * pool's balance is Σ positions + rewards pool to the wei, the ledger agrees and reconcile finds
 * nothing; a further pass sends nothing, and a migrated unbonding is withdrawn like any.
 */
import type { Kysely } from 'kysely';
import { type Address, parseEther, parseEventLogs, type TransactionReceipt } from 'viem';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type ChainServices, createChainServices } from '../coordinator/src/chain/create-chain-services.js';
import { DEFAULT_STAKING_POOL_PARAMETERS } from '../coordinator/src/chain/deploy-staking-pool.js';
import { deployDevnetPool } from '../coordinator/src/chain/devnet-contracts.js';
import { stakingPoolArtifact } from '../coordinator/src/chain/staking-pool-artifact.js';
import { TransferOutbox } from '../coordinator/src/chain/transfer-outbox.js';
import type { OutboxLog, TransferStep } from '../coordinator/src/chain/transfer-types.js';
import type { Database } from '../coordinator/src/db/schema.js';
import { reconcile } from '../coordinator/src/reconcile/reconcile.js';
import { VAULT_REWARD_SCALE } from '../coordinator/src/staking/legacy-transfers.js';
import { type MigrationHooks, migrateVault } from '../coordinator/src/staking/migrate-vault.js';
import { migrationIdOf } from '../coordinator/src/staking/migration-transfers.js';
import { registerPoolTransfers } from '../coordinator/src/staking/pool-transfers.js';
import { registerMigrationTransfers } from '../coordinator/src/staking/register-migration-transfers.js';
import { releaseUnbonded } from '../coordinator/src/staking/release-unbonded.js';
import { createTestApp, describeBackends, type TestApp, until } from '../coordinator/src/testing/index.js';
import { allTransactions, chainOverrides, type Devnet, startDevnet } from './chain-fixture.js';
import { buildVaultEra, VAULT_APY_BPS, VAULT_INDEX_AGE_S, type VaultEra } from './support/vault-era.js';

const UNBONDING_S = 3_600;

let devnet: Devnet;
beforeAll(async () => {
  devnet = await startDevnet({ blockTimeS: 0.1, stakingPool: { unbondingPeriodS: UNBONDING_S } });
}, 60_000);
afterAll(async () => devnet?.stop());

describeBackends('vault migration', (backend) => {
  let t: TestApp;
  let pool: Address;
  let era: VaultEra;
  const logged: string[] = [];
  const log: OutboxLog = { warn: (_o, m) => logged.push(m), error: (_o, m) => logged.push(m) };

  beforeAll(async () => {
    // A pool of its own per backend (each migration ends it), its migrator the staking vault.
    pool = await deployDevnetPool(
      devnet.context,
      { deployer: devnet.funder.account, funder: devnet.vaults.rewards.account },
      {
        ...DEFAULT_STAKING_POOL_PARAMETERS,
        unbondingPeriodS: UNBONDING_S,
        slasher: devnet.vaults.staking.address,
        migrator: devnet.vaults.staking.address,
      },
    );
    // The app's own timers are slow here: the test's processes are the only ones that send.
    t = await createTestApp(backend, {
      label: 'migration',
      overrides: {
        ...chainOverrides(devnet, {
          chain: { stakingPool: pool },
          staking: { releaseIntervalMs: 3_600_000 },
        }),
        payouts: { settleAfterMs: 3_600_000 },
      },
    });
    era = await buildVaultEra(t, devnet);
  }, 60_000);
  afterAll(async () => t?.close());

  /** A process: its own chain services (signer queue) and outbox, crashing where asked. */
  const processWith = (onStep?: (step: TransferStep) => Promise<void> | void) => {
    const services = createChainServices(t.config)!;
    const outbox = new TransferOutbox({
      db: t.db,
      context: services.context,
      clock: t.clock,
      log,
      staleClaimMs: 1,
      ...(onStep ? { onStep } : {}),
    });
    registerPoolTransfers(outbox, { db: t.db, services, keyring: t.app.ctx.keyring, clock: t.clock });
    registerMigrationTransfers(outbox, { db: t.db, services, clock: t.clock });
    return { db: t.db, services, clock: t.clock, outbox, log };
  };
  const differences = async (services: ChainServices) =>
    (await reconcile({ db: t.db, services, staleHoldMs: 60_000, now: Date.now() })).differences;
  const never = () => new Promise<void>(() => {});
  const steps = (db: Kysely<Database>) =>
    db
      .selectFrom('pool_migration_steps')
      .selectAll()
      .where('pool', '=', pool)
      .orderBy('created_at')
      .execute();
  const balance = (address: Address) => devnet.context.client.getBalance({ address });
  /** An owner's position in this suite's pool. */
  const poolPosition = async (owner: Address) => {
    const [staked, unbonding] = await devnet.context.client.readContract({
      address: pool,
      abi: stakingPoolArtifact.abi,
      functionName: 'positionOf',
      args: [owner],
    });
    return { staked, unbonding };
  };

  test('default: every vault-era position moves into the pool once, through two crashes; reconcile is clean', async () => {
    const services = createChainServices(t.config)!;
    const before = await differences(services);
    expect(before.filter((d) => d.check === 'pool_position').map((d) => 'user' in d && d.user)).toEqual(
      expect.arrayContaining(era.owners.map((o) => o.userId)),
    );
    const vault = devnet.vaults.staking.address;
    const [vaultBefore, txsBefore] = [await balance(vault), (await allTransactions(devnet)).length];

    // Process 1 dies after its second step.
    let done = 0;
    const dies: MigrationHooks = {
      afterStep: (s) => (s.status === 'done' && ++done === 2 ? never() : undefined),
    };
    void migrateVault(processWith(), dies);
    await until(async () => (await steps(t.db)).filter((s) => s.status === 'done').length === 2, 30_000);
    // The vault era's pending rows ended first: the claim paid, the release and the slash mapped.
    const legacy = await t.db
      .selectFrom('chain_transfers')
      .select(['id', 'status', 'error_code'])
      .where('id', 'in', Object.values(era.legacy))
      .execute();
    expect(Object.fromEntries(legacy.map((r) => [r.id, [r.status, r.error_code]]))).toEqual({
      [era.legacy.claim]: ['mined', null],
      [era.legacy.release]: ['cancelled', 'moved_to_pool'],
      [era.legacy.slash]: ['cancelled', 'moved_to_pool'],
    });

    // Process 2 dies right after broadcasting its first step: sent, its end never recorded.
    let broadcast = false;
    void migrateVault(
      processWith((step) => {
        if (step !== 'broadcast') return;
        broadcast = true;
        return never();
      }),
    );
    await until(() => broadcast, 30_000);

    // Process 3 finishes: the broadcast step from the chain, never sent again; the rest.
    const open = (await steps(t.db)).filter((step) => step.status === 'sending');
    expect(open).toHaveLength(1);
    const sent = await t.db
      .selectFrom('chain_transfers')
      .select('status')
      .where('id', '=', open[0]!.transfer_id!)
      .executeTakeFirstOrThrow();
    expect(sent.status).toBe('broadcast');
    const third = await migrateVault(processWith());
    expect(third).toMatchObject({ status: 'done' });
    const plan = await steps(t.db);
    expect(plan.map((s) => s.status)).toEqual(plan.map(() => 'done'));
    expect(plan.map((s) => s.kind).sort()).toEqual(
      [
        'end',
        'reward',
        'reward',
        'reward',
        'slash',
        'stake',
        'stake',
        'stake',
        'unbonding',
        'unbonding',
      ].sort(),
    );

    // On chain: each position credited once, the unbondings with the vault era's release times.
    const transactions = (await allTransactions(devnet)).slice(txsBefore);
    const fromVault = transactions.filter((x) => x.from === vault.toLowerCase());
    expect(fromVault).toHaveLength(plan.filter((s) => s.kind !== 'reward').length);
    const receipts = await Promise.all(
      fromVault.map((x) => devnet.context.client.getTransactionReceipt({ hash: x.hash })),
    );
    const migrated = parseEventLogs({
      abi: stakingPoolArtifact.abi,
      eventName: 'Migrated',
      logs: receipts.flatMap((r: TransactionReceipt) => r.logs),
    });
    const ids = plan
      .filter((s) => s.kind === 'stake' || s.kind === 'unbonding')
      .map((s) => migrationIdOf(s.id));
    expect(migrated.map((e) => e.args.migrationId).sort()).toEqual([...ids].sort());
    for (const owner of era.owners) {
      const position = await poolPosition(owner.proxy);
      const unbonding = owner.unbondings.reduce((sum, u) => sum + u.amountWei, 0n);
      expect([position.staked, position.unbonding]).toEqual([owner.stakedWei, unbonding]);
      for (const u of owner.unbondings) {
        const event = migrated.find((e) => e.args.owner === owner.proxy && e.args.unbonding === u.amountWei);
        expect(event?.args.releaseAt).toBe(BigInt(Math.ceil(u.releaseAtMs / 1000)));
        const row = await t.db
          .selectFrom('unbondings')
          .selectAll()
          .where('id', '=', u.id)
          .executeTakeFirstOrThrow();
        expect(row).toMatchObject({ status: 'unbonding' });
        expect(BigInt(row.chain_pos!)).toBe(event!.blockNumber * 1_000_000n + BigInt(event!.logIndex));
      }
    }
    // The vault paid what it owed, and gas; the slash's tokens are in the pool's rewards.
    const gas = receipts.reduce((sum, r) => sum + r.gasUsed * r.effectiveGasPrice, 0n);
    expect(vaultBefore - (await balance(vault))).toBe(era.owedWei + gas);
    const slash = await t.db
      .selectFrom('slashes')
      .selectAll()
      .where('id', '=', era.slashId)
      .executeTakeFirstOrThrow();
    expect(slash).toMatchObject({ status: 'sent', raw_tx: null });
    expect(fromVault.map((x) => x.hash)).toContain(slash.tx_hash);
    // Each owner's vault-era rewards paid by the rewards vault (the claim's 1 TOK came first).
    const claims = await t.db.selectFrom('stake_events').selectAll().where('kind', '=', 'claim').execute();
    for (const owner of era.owners) {
      const accrued = owner.stakedWei * VAULT_APY_BPS * VAULT_INDEX_AGE_S * 10_000n;
      const paid = claims.filter((c) => c.user_id === owner.userId).map((c) => BigInt(c.amount_wei));
      const expected = [accrued / VAULT_REWARD_SCALE, ...(owner.name === 'alice' ? [era.payoutWei] : [])];
      expect(paid.sort()).toEqual(expected.sort());
    }
    expect(await differences(services)).toEqual([]);
    // Refused before signing: the two mapped rows only; no step failed.
    expect(logged.filter((m) => m.includes('refused before signing'))).toHaveLength(2);
    expect(logged.filter((m) => m.includes('step failed') || m.includes('not done yet'))).toEqual([]);
    expect(
      await devnet.context.client.readContract({
        address: pool,
        abi: stakingPoolArtifact.abi,
        functionName: 'migrationEnded',
      }),
    ).toBe(true);

    // Another pass, another start: nothing to do, nothing sent.
    const txsAfter = (await allTransactions(devnet)).length;
    expect(await migrateVault(processWith())).toEqual({ status: 'done', moved: 0 });
    expect((await allTransactions(devnet)).length).toBe(txsAfter);
  }, 120_000);

  test('behavior: a migrated unbonding is the pool’s: withdrawn to the proxy wallet when due', async () => {
    const carol = era.owners.find((o) => o.name === 'carol')!;
    const deps = processWith();
    await devnet.fund(carol.proxy, { nativeWei: parseEther('1') }); // the withdraw's gas
    const before = await balance(carol.proxy);
    expect(await releaseUnbonded(deps, { userId: carol.userId })).toBe(1);
    expect(await balance(carol.proxy)).toBeGreaterThan(before + parseEther('9.9'));
    expect((await poolPosition(carol.proxy)).unbonding).toBe(0n);
    const [row] = await t.db
      .selectFrom('unbondings')
      .selectAll()
      .where('id', '=', carol.unbondings[0]!.id)
      .execute();
    expect(row).toMatchObject({ status: 'released' });
    expect(await differences(deps.services)).toEqual([]);
  });
});
