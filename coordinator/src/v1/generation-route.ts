/**
 * GET /api/v1/generation?id= — one of the caller's requests, in OpenRouter's generation shape (its
 * SDK's `GenerationResponse`: every member it requires), with our own names beside.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, onRequestHookHandler } from 'fastify';
import type { AppContext } from '../app-context.js';
import { toBigInt, toMillis } from '../db/bigint.js';
import { USAGE_STATUS } from '../db/tables/usage.js';
import { ApiError } from '../errors.js';
import { nanoToUsd } from '../ledger/money.js';
import { tokensPerSecond } from '../usage/tokens-per-second.js';

const GenerationQuery = Type.Object(
  { id: Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_-]+$' }) },
  { additionalProperties: false },
);
const API_KEY = [{ apiKey: [] }];

/** OpenRouter's `api_type` of each job kind (null: not a client request). */
const API_TYPE: Record<string, string> = {
  chat: 'completions',
  completion: 'completions',
  vision: 'completions',
  embedding: 'embeddings',
  speech: 'tts',
  transcription: 'stt',
  translation: 'stt',
};

export async function generationRoute(
  app: FastifyInstance,
  { ctx, apiKey }: { ctx: AppContext; apiKey: onRequestHookHandler },
): Promise<void> {
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
      const cost = nanoToUsd(sum((r) => r.cost_nano));
      // Of the prompt, the tokens billed at the node's cached price, and what that saved (fee included).
      const cached = Number(sum((r) => r.cached_tokens ?? 0));
      const cacheDiscount = nanoToUsd(sum((r) => r.cache_discount_nano ?? 0));
      const kind = row.kind;
      return {
        data: {
          id: row.request_id,
          request_id: row.request_id,
          model: row.model,
          node_id: row.node_id,
          kind,
          api_type: API_TYPE[kind] ?? null,
          created_at: new Date(toMillis(row.created_at)).toISOString(),
          tokens_prompt: prompt,
          tokens_completion: completion,
          total_cost: cost,
          // What the account was charged (OpenRouter's `usage`); no upstream or BYOK cost beside it.
          usage: cost,
          upstream_inference_cost: null,
          cache_discount: cached > 0 ? cacheDiscount : null,
          is_byok: false,
          latency_ms: latencyMs,
          tokens_per_second: tokensPerSecond(completion, latencyMs),
          finish_reason: row.finish_reason,
          // The node's own finish reason is the one it reported (the coordinator keeps it as sent).
          native_finish_reason: row.finish_reason,
          status: row.status,
          streamed: row.streamed === null ? null : Number(row.streamed) === 1,
          cancelled: row.status === USAGE_STATUS.clientDisconnected,
          // OpenRouter's names for the same: the provider is the node; native tokens are the model's own.
          provider_name: row.node_id,
          // The id the node that finished it knew the job by (null before migration 026).
          upstream_id: row.upstream_id,
          router: null,
          generation_time: latencyMs,
          latency: firstTtft === null ? null : Number(firstTtft),
          moderation_latency: null,
          native_tokens_prompt: prompt,
          native_tokens_completion: completion,
          native_tokens_cached: cached,
          native_tokens_reasoning: null,
          native_tokens_completion_images: null,
          // Counts of what the request used besides tokens: no web search or file fetch happens here;
          // voice jobs carry one audio input or output; images fetched for vision are not counted.
          num_search_results: 0,
          num_fetches: kind === 'vision' ? null : 0,
          num_media_prompt: kind === 'vision' ? null : 0,
          num_media_completion: kind === 'speech' ? 1 : 0,
          num_input_audio_prompt: kind === 'transcription' || kind === 'translation' ? 1 : 0,
          // Who sent it, as its headers and `user` said (v1/request-origin.ts; null under zdr).
          origin: row.origin ?? '',
          http_referer: row.http_referer,
          user_agent: row.user_agent,
          external_user: row.external_user,
          // No apps, presets, workspaces or service tiers here.
          app_id: null,
          preset_id: null,
          service_tier: null,
          web_search_engine: null,
          workspace_id: null,
          provider_responses: null,
          data_region: 'global',
        },
      };
    },
  );
}
