import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { getAddress, isAddress } from 'viem';
import type { ChainRouteOptions } from '../app-context.js';
import { ApiError } from '../errors.js';
import { claim } from '../staking/claim.js';
import { getStake } from '../staking/get-stake.js';
import { requirePool } from '../staking/pool-transfers.js';
import { tierName } from '../staking/position-store.js';
import { releaseUnbonded } from '../staking/release-unbonded.js';
import { stake } from '../staking/stake.js';
import { formatTokenAmount, parseTokenAmount } from '../staking/token-amount.js';
import { unstake } from '../staking/unstake.js';

/** The methods of POST /tx; `public` ones need no session. */
export const TX_METHODS = {
  chain_stake: { public: false },
  chain_getStake: { public: true },
  chain_claim: { public: false },
  chain_unstake: { public: false },
  chain_getTiers: { public: true },
} as const;
export type TxMethod = keyof typeof TX_METHODS;

/**
 * POST /tx {method, params}: the chain endpoint. The response is the method's result itself;
 * errors use the common shape. Writes need the session JWT of the wallet named in params[0]
 * (no token 401, another wallet's 403); chain_getStake and chain_getTiers are public. Amounts are
 * exactly "N.NNNN SYMBOL" with the configured symbol, else 400 and nothing happens.
 */
export async function txRoutes(
  app: FastifyInstance,
  { ctx, services, outbox }: ChainRouteOptions,
): Promise<void> {
  app.post(
    '/tx',
    {
      schema: {
        summary: 'Chain methods: chain_stake, chain_getStake, chain_claim, chain_unstake, chain_getTiers',
        tags: ['chain'],
        body: Type.Object({
          method: Type.String({ maxLength: 64 }),
          params: Type.Array(Type.Unknown(), { maxItems: 8, default: [] }),
        }),
      },
    },
    async (request, reply) => {
      const { method, params } = request.body as { method: string; params: unknown[] };
      if (!Object.hasOwn(TX_METHODS, method)) {
        throw new ApiError(
          'invalid_request',
          `Unknown method; one of ${Object.keys(TX_METHODS).join(', ')}.`,
          {
            param: 'method',
          },
        );
      }
      const chain = services();
      const deps = { db: ctx.db, services: chain, keyring: ctx.keyring, clock: ctx.clock, outbox: outbox() };
      switch (method as TxMethod) {
        case 'chain_getTiers': {
          const pool = requirePool(chain);
          const parameters = await pool.parameters();
          return {
            symbol: chain.nativeSymbol,
            pool: pool.address,
            baseApyBps: Number(parameters.baseApyBps),
            unbondingPeriodS: Number(parameters.unbondingPeriodS),
            slashBps: Number(parameters.slashBps),
            tiers: parameters.tiers.map((t, i) => ({
              name: tierName(i, chain.tiers),
              minStake: formatTokenAmount(t.minStakeWei, chain.nativeSymbol),
              multiplierBps: Number(t.multiplierBps),
              apyBps: Number((parameters.baseApyBps * t.multiplierBps) / 10_000n),
            })),
          };
        }
        case 'chain_getStake':
          return getStake(ctx.db, chain, addressParam(params));
        case 'chain_stake': {
          const user = await ownerOf(app, request, reply, params);
          const amountWei = amountParam(params, chain.nativeSymbol);
          return stake(deps, { user, amountWei });
        }
        case 'chain_unstake': {
          const user = await ownerOf(app, request, reply, params);
          const amountWei = amountParam(params, chain.nativeSymbol);
          const result = await unstake(deps, { user, amountWei });
          if ((await requirePool(chain).parameters()).unbondingPeriodS === 0n) {
            await releaseUnbonded({ ...deps, log: request.log }, { userId: user.id });
          }
          return result;
        }
        case 'chain_claim': {
          const user = await ownerOf(app, request, reply, params);
          return claim(deps, { user });
        }
      }
    },
  );
}

function addressParam(params: unknown[]): `0x${string}` {
  const value = params[0];
  if (typeof value !== 'string' || !isAddress(value, { strict: false })) {
    throw new ApiError('invalid_request', 'params[0] must be a wallet address.', { param: 'params.0' });
  }
  // Mixed case must be a valid checksum (isAddress strict); all-lower or all-upper is accepted.
  if (value !== value.toLowerCase() && value.slice(2) !== value.slice(2).toUpperCase() && !isAddress(value)) {
    throw new ApiError('invalid_request', 'params[0] has an invalid checksum.', { param: 'params.0' });
  }
  return getAddress(value);
}

function amountParam(params: unknown[], symbol: string): bigint {
  const amount = parseTokenAmount(params[1], symbol);
  if (amount === null || amount === 0n) {
    throw new ApiError(
      'invalid_request',
      `params[1] must be a positive amount with exactly 4 decimals and the symbol, e.g. "12.3400 ${symbol}".`,
      { param: 'params.1' },
    );
  }
  return amount;
}

/** The signed-in user, who must be the wallet named in params[0] (else 403). */
async function ownerOf(
  app: FastifyInstance,
  request: FastifyRequest,
  reply: FastifyReply,
  params: unknown[],
): Promise<{ id: string; address: string }> {
  await app.requireUser(request, reply);
  const address = addressParam(params);
  const user = request.user!;
  if (user.address !== address) {
    throw new ApiError('forbidden', 'Only the wallet named in params[0] may do this.', { param: 'params.0' });
  }
  return { id: user.id, address: user.address };
}
