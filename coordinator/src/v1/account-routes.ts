/**
 * What a client can read about its key and its requests with the `sk-` key alone, as OpenRouter
 * serves them: GET /api/v1/key (balance, spend per period, the key's limit, rate limits),
 * GET /api/v1/generation?id= (generation-route.ts) and GET /api/v1/credits (what the account put in and used, in USD). Every other /api/v1 path is
 * its /v1 route (compose/create-fastify.ts rewrites it), so an OpenRouter client needs only the host changed.
 */
import type { FastifyInstance, onRequestHookHandler } from 'fastify';
import type { AppContext } from '../app-context.js';
import { toBigInt, toBigIntOrNull } from '../db/bigint.js';
import { nanoToUsd } from '../ledger/money.js';
import { keyUsageByPeriod } from '../usage/key-usage-by-period.js';
import { generationRoute } from './generation-route.js';

const API_KEY = [{ apiKey: [] }];

export async function accountRoutes(
  app: FastifyInstance,
  { ctx, apiKey }: { ctx: AppContext; apiKey: onRequestHookHandler },
): Promise<void> {
  app.get(
    '/api/v1/credits',
    {
      onRequest: apiKey,
      schema: {
        tags: ['v1'],
        operationId: 'getCredits',
        summary: "The account's credits and usage in USD (OpenRouter's shape: credits − usage = balance)",
        security: API_KEY,
      },
    },
    async (request) => {
      const { userId } = request.apiKey!;
      await ctx.ledger.idle();
      const { balanceNano } = await ctx.ledger.balance(userId);
      const used = await ctx.db
        .selectFrom('api_keys')
        .select((eb) => eb.fn.sum<string | number | bigint | null>('spend_nano').as('spend'))
        .where('user_id', '=', userId)
        .executeTakeFirst();
      const usage = toBigIntOrNull(used?.spend ?? null) ?? 0n;
      return { data: { total_credits: nanoToUsd(balanceNano + usage), total_usage: nanoToUsd(usage) } };
    },
  );

  app.get(
    '/api/v1/key',
    {
      onRequest: apiKey,
      schema: {
        tags: ['v1'],
        operationId: 'getKey',
        summary: "The calling key: its spend and limit, the account's balance, the rate limits",
        security: API_KEY,
      },
    },
    async (request) => {
      const { keyId, userId } = request.apiKey!;
      await ctx.ledger.idle();
      const key = await ctx.db
        .selectFrom('api_keys')
        .select(['name', 'spend_nano', 'limit_nano'])
        .where('id', '=', keyId)
        .executeTakeFirstOrThrow();
      const { balanceNano } = await ctx.ledger.balance(userId);
      const spend = toBigInt(key.spend_nano);
      const limit = toBigIntOrNull(key.limit_nano);
      const remaining = limit === null ? null : limit > spend ? limit - spend : 0n;
      const periods = await keyUsageByPeriod(ctx.db, { userId, keyId, now: ctx.clock.now() });
      const { rateLimit } = ctx.config;
      return {
        data: {
          label: key.name,
          usage: nanoToUsd(spend),
          // Calendar periods in UTC (the week from Monday), from the usage rollups.
          usage_daily: nanoToUsd(periods.dailyNano),
          usage_weekly: nanoToUsd(periods.weeklyNano),
          usage_monthly: nanoToUsd(periods.monthlyNano),
          limit: limit === null ? null : nanoToUsd(limit),
          limit_remaining: remaining === null ? null : nanoToUsd(remaining),
          // A key's limit is a total: it never resets.
          limit_reset: null,
          balance: nanoToUsd(balanceNano),
          is_free_tier: false,
          is_management_key: false,
          is_provisioning_key: false,
          // No bring-your-own-key providers here: every request runs on the network's nodes.
          byok_usage: 0,
          byok_usage_daily: 0,
          byok_usage_weekly: 0,
          byok_usage_monthly: 0,
          include_byok_in_limit: false,
          // No free models: every request is paid.
          free_model_daily_requests: { limit: 0, remaining: 0, used: 0 },
          allowed_data_regions: ['global'],
          creator_user_id: userId,
          organization_id: null,
          workspace_id: null,
          expires_at: null,
          rate_limit: rateLimit.enabled
            ? {
                requests: rateLimit.userMax,
                interval: `${Math.round(rateLimit.windowMs / 1000)}s`,
                note: 'Requests per user (or per sk- key) and window; 429 with Retry-After past it.',
              }
            : { requests: -1, interval: '0s', note: 'No rate limit on this coordinator.' },
        },
      };
    },
  );

  await generationRoute(app, { ctx, apiKey });
}
