import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app.js';
import { ApiError } from '../errors.js';
import { releaseUnbonded } from '../staking/release-unbonded.js';
import { topupRoutes } from '../topup/routes.js';
import { txRoutes } from '../tx/routes.js';
import { withdrawRoutes } from '../withdraw/routes.js';
import { type ChainServices, createChainServices } from './create-chain-services.js';

/** How often unbonded stakes are returned to their owners. */
export const DEFAULT_RELEASE_INTERVAL_MS = 10_000;

/** What each chain route plugin gets: the app context and the one set of chain services. */
export type ChainRouteOptions = {
  ctx: AppContext;
  /** The chain services; throws chain_unavailable when no chain RPC is configured. */
  services: () => ChainServices;
};

/**
 * The chain capabilities: POST /api/user/topup, POST /tx, POST /api/keys/proxy/withdraw, all on one
 * set of chain services (one signer queue per wallet for the whole process), and the timer that
 * returns unbonded stakes.
 */
export async function chainRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const chain = createChainServices(ctx.config);
  const services = (): ChainServices => {
    if (!chain) throw new ApiError('chain_unavailable', 'No chain is configured on this coordinator.');
    return chain;
  };
  await app.register(topupRoutes, { ctx, services });
  await app.register(txRoutes, { ctx, services });
  await app.register(withdrawRoutes, { ctx, services });
  if (chain?.stakingVault?.account) {
    let timer: NodeJS.Timeout | undefined;
    let running: Promise<unknown> = Promise.resolve();
    const deps = { db: ctx.db, services: chain, keyring: ctx.keyring, clock: ctx.clock };
    app.addHook('onReady', async () => {
      timer = setInterval(() => {
        running = releaseUnbonded(deps).catch((error: unknown) =>
          app.log.warn({ err: error }, 'releasing unbonded stakes failed'),
        );
      }, ctx.config.staking.releaseIntervalMs);
      timer.unref();
    });
    app.addHook('onClose', async () => {
      clearInterval(timer);
      await running;
    });
  }
}
