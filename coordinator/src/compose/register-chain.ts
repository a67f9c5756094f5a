import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app-context.js';
import { type ChainServices, createChainServices } from '../chain/create-chain-services.js';
import { TransferOutbox } from '../chain/transfer-outbox.js';
import { ApiError } from '../errors.js';
import { payoutRoutes } from '../provider/payout-routes.js';
import { PAYOUT_PURPOSE, payoutTransfers } from '../provider/payout-transfers.js';
import { settlePayouts } from '../provider/settle-payouts.js';
import { migrateVault } from '../staking/migrate-vault.js';
import { registerPoolTransfers } from '../staking/pool-transfers.js';
import { registerMigrationTransfers } from '../staking/register-migration-transfers.js';
import { releaseUnbonded } from '../staking/release-unbonded.js';
import { executeSlashes } from '../staking/slash.js';
import { topupRoutes } from '../topup/routes.js';
import { watchDeposits } from '../topup/watch-deposits.js';
import { txRoutes } from '../tx/routes.js';
import { withdrawRoutes } from '../withdraw/routes.js';
import { WITHDRAW_PURPOSE, withdrawTransfers } from '../withdraw/withdraw-transfers.js';
import { repeat } from './repeat.js';

/**
 * The chain capabilities: one set of chain services (one signer queue per wallet for the whole
 * process) and one transfer outbox (every use registered on it), passed to the routes of top-up,
 * /tx, withdraw and payouts (each registers its own); then the timers that return unbonded stakes,
 * carry out slashes (staking/slash.ts) and finish every open transfer (payouts from before the
 * outbox adopted first) and, when configured, the deposit watcher.
 */
export async function registerChain(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const chain = createChainServices(ctx.config, ctx.db);
  const services = (): ChainServices => {
    if (!chain) throw new ApiError('chain_unavailable', 'No chain is configured on this coordinator.');
    return chain;
  };
  // One outbox for the process: every use registers how its transfers are signed and how they end.
  const transfers = chain
    ? new TransferOutbox({ db: ctx.db, context: chain.context, clock: ctx.clock, log: app.log })
        .register(PAYOUT_PURPOSE, payoutTransfers(chain, ctx.clock))
        .register(WITHDRAW_PURPOSE, withdrawTransfers({ db: ctx.db, services: chain, keyring: ctx.keyring }))
    : undefined;
  if (chain && transfers) {
    registerPoolTransfers(transfers, { db: ctx.db, services: chain, keyring: ctx.keyring, clock: ctx.clock });
    registerMigrationTransfers(transfers, { db: ctx.db, services: chain, clock: ctx.clock });
  }
  const outbox = (): TransferOutbox => {
    services();
    return transfers!;
  };
  const options = { ctx, services, outbox };
  await app.register(topupRoutes, options);
  await app.register(txRoutes, options);
  await app.register(withdrawRoutes, options);
  await app.register(payoutRoutes, options);
  if (!chain) return;
  const deps = { db: ctx.db, services: chain, keyring: ctx.keyring, clock: ctx.clock };
  const outboxDeps = { ...deps, outbox: transfers!, log: app.log };
  // The vault era's stake moves into the pool first (at start, then on the timer until done): the
  // release and slash passes wait for it, so neither acts on a position the pool does not hold yet.
  let migrated = !chain.stakingPool;
  const migrate = async () => {
    if (migrated) return;
    const { status } = await migrateVault(outboxDeps);
    migrated = status === 'none' || status === 'done';
  };
  app.addHook('onReady', () =>
    migrate().catch((error: unknown) => app.log.warn({ err: error }, 'vault migration failed; retried')),
  );
  if (chain.stakingPool) {
    repeat(app, ctx.config.staking.releaseIntervalMs, 'withdrawing unbonded stakes', async () => {
      await migrate();
      if (migrated) await releaseUnbonded(outboxDeps);
    });
  }
  if (chain.stakingPool?.slasher) {
    repeat(app, ctx.config.staking.releaseIntervalMs, 'executing slashes', async () => {
      if (migrated) await executeSlashes(outboxDeps);
    });
  }
  // Every open transfer (of any use) a process left behind, finished from the chain; payouts opened
  // before the outbox are adopted first.
  const { settleAfterMs } = ctx.config.payouts;
  repeat(app, settleAfterMs, 'finishing open transfers', () =>
    settlePayouts(
      { store: ctx.store, services: chain, outbox: transfers! },
      { now: ctx.clock.now(), settleAfterMs },
    ),
  );
  if (ctx.config.chain.watchDeposits) {
    repeat(app, ctx.config.chain.watchIntervalMs, 'watching deposits', () => watchDeposits(deps));
  }
}
