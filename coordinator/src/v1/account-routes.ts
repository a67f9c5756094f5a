/**
 * What a client can read about its key and its requests with the `sk-` key alone, as OpenRouter
 * serves them: GET /api/v1/key (balance, spend, the key's limit, rate limits) and
 * GET /api/v1/generation?id= (one request: model, node, tokens, cost, latency, finish reason),
 * GET /api/v1/credits (what the account put in and used, in USD). Every other /api/v1 path is
 * its /v1 route (compose/create-fastify.ts rewrites it), so an OpenRouter client needs only the host changed.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, onRequestHookHandler } from 'fastify';
import type { AppContext } from '../app-context.js';
import { toBigInt, toBigIntOrNull, toMillis } from '../db/bigint.js';
import { ApiError } from '../errors.js';
import { nanoToUsd } from '../ledger/money.js';
import { tokensPerSecond } from '../usage/tokens-per-second.js';

const GenerationQuery = Type.Object(
  { id: Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_-]+$' }) },
  { additionalProperties: false },
);
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
      const { rateLimit } = ctx.config;
      return {
        data: {
          label: key.name,
          usage: nanoToUsd(spend),
          limit: limit === null ? null : nanoToUsd(limit),
          limit_remaining: remaining === null ? null : nanoToUsd(remaining),
          balance: nanoToUsd(balanceNano),
          is_free_tier: false,
          rate_limit: rateLimit.enabled
            ? { requests: rateLimit.userMax, interval: `${Math.round(rateLimit.windowMs / 1000)}s` }
            : null,
        },
      };
    },
  );

  app.get(
    '/api/v1/generation',
    {
      onRequest: apiKey,
      schema: {
        tags: ['v1'],
        operationId: 'getGeneration',
        summary: 'One of your requests by its id (the response id): tokens, cost, latency, node',
        security: API_KEY,
        querystring: GenerationQuery,
      },
    },
    async (request) => {
      const { id } = request.query as { id: string };
      await ctx.ledger.idle();
      // A continued answer has a row per node that produced part of it (router/continue-stream.ts):
      // the generation is their sum, as the node that finished it (the last row) answered it.
      const rows = await ctx.db
        .selectFrom('usage_records')
        .selectAll()
        .where('request_id', '=', id)
        .where('user_id', '=', request.apiKey!.userId)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      const row = rows.at(-1);
      if (!row)
        throw new ApiError('not_found', `No generation with id "${id}" for this account.`, { param: 'id' });
      const sum = (pick: (r: (typeof rows)[number]) => string | number | bigint) =>
        rows.reduce((total, r) => total + toBigInt(pick(r)), 0n);
      const latencyMs = row.latency_ms === null ? null : Number(row.latency_ms);
      const completion = Number(sum((r) => r.completion_tokens));
      const prompt = Number(sum((r) => r.prompt_tokens));
      const firstTtft = rows[0]!.ttft_ms;
      return {
        data: {
          id: row.request_id,
          model: row.model,
          node_id: row.node_id,
          kind: row.kind,
          created_at: new Date(toMillis(row.created_at)).toISOString(),
          tokens_prompt: prompt,
          tokens_completion: completion,
          total_cost: nanoToUsd(sum((r) => r.cost_nano)),
          latency_ms: latencyMs,
          tokens_per_second: tokensPerSecond(completion, latencyMs),
          finish_reason: row.finish_reason,
          status: row.status,
          // OpenRouter's names for the same: the provider is the node; native tokens are the model's own.
          provider_name: row.node_id,
          generation_time: latencyMs,
          latency: firstTtft === null ? null : Number(firstTtft),
          native_tokens_prompt: prompt,
          native_tokens_completion: completion,
        },
      };
    },
  );
}
