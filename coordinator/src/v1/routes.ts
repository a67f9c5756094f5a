/**
 * The inference router's HTTP surface: /v1 (OpenAI-compatible, sk- keys only) and the app-API
 * routes /api/router/models and /api/router/usage (session JWT).
 */
import type { JobKind } from '@gpumesh/protocol';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../app-context.js';
import { ApiError } from '../errors.js';
import type { Hub } from '../hub/hub.js';
import { MAX_CLIENT_USD, usdToNano } from '../ledger/money.js';
import { buildCatalog } from '../router/build-catalog.js';
import type { ProviderPreferences } from '../router/pick-index.js';
import { summarizeUsage } from '../usage/summarize-usage.js';
import { dropNullFields } from './drop-null-fields.js';
import { estimatePromptTokens } from './estimate-prompt-tokens.js';
import { requireApiKey } from './require-api-key.js';
import {
  type InferenceDeps,
  type InferenceJob,
  newRequestId,
  type RouterSettings,
  runInference,
} from './run-inference.js';
import {
  ChatCompletionBody,
  CompletionBody,
  EmbeddingBody,
  type ProviderPreferencesBody,
  UsageQuery,
} from './schemas.js';
import { openSse } from './sse.js';

export type RouterRoutesOptions = {
  ctx: AppContext;
  hub: Hub;
  settings: RouterSettings & { maxTokensCap: number; nativeUsdPriceNano: bigint };
};

/** Families a job kind may run on. */
const FAMILIES_FOR_KIND: Record<JobKind, readonly string[]> = {
  chat: ['chat', 'vision'],
  completion: ['chat', 'text'],
  embedding: ['embedding'],
};

/** Fields of our own that never reach a node. */
const ROUTER_FIELDS = [
  'provider',
  'stream',
  'stream_options',
  'user',
  'max_completion_tokens',
  'encoding_format',
];

/** Longest usage window one summary covers. */
export const MAX_USAGE_RANGE_DAYS = 366;
const DAY_MS = 86_400_000;

export async function routerRoutes(app: FastifyInstance, options: RouterRoutesOptions): Promise<void> {
  const { ctx, hub, settings } = options;
  const deps: InferenceDeps = {
    db: ctx.db,
    hub,
    settings,
    clock: ctx.clock,
    metrics: app.metrics,
    log: app.log,
  };
  const apiKey = requireApiKey(ctx.db, ctx.acceptedKeys);
  const catalog = () => buildCatalog(hub.index, settings.nativeUsdPriceNano);

  app.get(
    '/v1/models',
    { onRequest: apiKey, schema: { tags: ['v1'], summary: 'Models live nodes serve now (OpenAI list)' } },
    async () => ({
      object: 'list',
      data: catalog().map((m) => ({
        id: m.id,
        object: 'model',
        created: 0,
        owned_by: 'gpumesh',
        family: m.family,
        context_length: m.contextLength,
        live_nodes: m.liveNodes,
        pricing: {
          prompt: m.cheapest.prompt,
          completion: m.cheapest.completion,
          unit: 'per_million_tokens',
        },
      })),
    }),
  );

  app.get(
    '/api/router/models',
    {
      onRequest: app.requireUser,
      schema: {
        tags: ['router'],
        summary: 'The router catalog: live models with cheapest and median prices',
      },
    },
    async () => ({ object: 'list', data: catalog() }),
  );

  app.get(
    '/api/router/usage',
    {
      onRequest: app.requireUser,
      schema: {
        tags: ['router'],
        summary: 'Usage totals and breakdowns by model, key and day',
        querystring: UsageQuery,
      },
    },
    async (request) => {
      const q = request.query as UsageQuery;
      const today = new Date(ctx.clock.now()).toISOString().slice(0, 10);
      const to = q.to ?? today;
      const from = q.from ?? new Date(Date.parse(to) - 29 * DAY_MS).toISOString().slice(0, 10);
      const span = (Date.parse(to) - Date.parse(from)) / DAY_MS;
      if (!Number.isFinite(span) || span < 0)
        throw new ApiError('invalid_request', 'from must not be after to.', { param: 'from' });
      if (span >= MAX_USAGE_RANGE_DAYS) {
        throw new ApiError('invalid_request', `The range may span at most ${MAX_USAGE_RANGE_DAYS} days.`, {
          param: 'from',
        });
      }
      return summarizeUsage(ctx.db, { userId: request.user!.id, from, to });
    },
  );

  const infer = (kind: JobKind) => async (request: FastifyRequest, reply: FastifyReply) => {
    const requestId = newRequestId();
    reply.header('x-request-id', requestId);
    const body = request.body as Record<string, unknown> & {
      model: string;
      provider?: ProviderPreferencesBody;
    };
    const key = request.apiKey!;
    const offers = hub.index.hasModel(body.model)
      ? [...hub.index.models()].find(([id]) => id === body.model)?.[1]
      : undefined;
    if (!offers || offers.size === 0) {
      throw new ApiError('model_not_found', `No live node serves the model "${body.model}".`, {
        param: 'model',
      });
    }
    const first = offers.values().next().value!;
    if (!FAMILIES_FOR_KIND[kind].includes(first.offer.family)) {
      throw new ApiError('invalid_request', `The model "${body.model}" is a ${first.offer.family} model.`, {
        param: 'model',
      });
    }
    const contextLength = Math.max(...[...offers.values()].map((e) => e.offer.contextLength));
    const maxTokens =
      kind === 'embedding' ? 0 : effectiveMaxTokens(body, settings.maxTokensCap, contextLength);
    const nodeRequest: Record<string, unknown> = { ...body };
    for (const f of ROUTER_FIELDS) delete nodeRequest[f];
    if (kind !== 'embedding') nodeRequest.max_tokens = maxTokens;
    // OpenAI takes a one-element prompt array; nodes take the string.
    if (kind === 'completion' && Array.isArray(body.prompt)) nodeRequest.prompt = body.prompt[0];
    const stream = kind !== 'embedding' && body.stream === true;
    const job: InferenceJob = {
      requestId,
      userId: key.userId,
      keyId: key.keyId,
      kind,
      model: body.model,
      nodeRequest,
      stream,
      promptTokensBound: estimatePromptTokens(kind, body),
      maxTokens,
      provider: toPreferences(body.provider),
    };
    if (!stream) {
      const result = await runInference(deps, job);
      reply.header('x-gpumesh-node', result.nodeId);
      if (kind === 'embedding' && body.encoding_format === 'base64')
        return toBase64Embeddings(result.response);
      return result.response;
    }
    const sink = openSse(request, reply, requestId);
    try {
      await runInference(deps, job, sink);
    } catch (error) {
      if (!sink.started) throw error; // nothing sent yet: a plain HTTP error
      const apiError = error instanceof ApiError ? error : new ApiError('internal_error');
      if (!sink.closed) sink.finish({ error: apiError.toBody().error });
    }
    return reply;
  };

  const limits = { bodyLimit: ctx.config.bodyLimitBytes, preValidation: dropNullFields };
  app.post(
    '/v1/chat/completions',
    { ...limits, onRequest: apiKey, schema: { tags: ['v1'], body: ChatCompletionBody } },
    infer('chat'),
  );
  app.post(
    '/v1/completions',
    { ...limits, onRequest: apiKey, schema: { tags: ['v1'], body: CompletionBody } },
    infer('completion'),
  );
  app.post(
    '/v1/embeddings',
    { ...limits, onRequest: apiKey, schema: { tags: ['v1'], body: EmbeddingBody } },
    infer('embedding'),
  );
}

function effectiveMaxTokens(body: Record<string, unknown>, cap: number, contextLength: number): number {
  const field = body.max_completion_tokens !== undefined ? 'max_completion_tokens' : 'max_tokens';
  const asked = body[field] as number | undefined;
  if (asked !== undefined) {
    if (asked > cap) {
      throw new ApiError('invalid_request', `${field} may be at most ${cap}.`, { param: field });
    }
    return asked;
  }
  return Math.max(1, Math.min(cap, contextLength));
}

/**
 * A max_price field (USD per million tokens, number or decimal string; null or absent = no limit)
 * → nanousd per million, through the one checked conversion; out of range is 400 naming the field.
 */
function maxPriceNano(value: number | string | null | undefined, field: 'prompt' | 'completion') {
  if (value === undefined || value === null) return undefined;
  const nano = usdToNano(value);
  if (nano === null) {
    throw new ApiError(
      'invalid_request',
      `provider.max_price.${field} must be a USD amount from 0 to ${MAX_CLIENT_USD}.`,
      { param: `provider.max_price.${field}` },
    );
  }
  return nano;
}

function toPreferences(p: ProviderPreferencesBody | undefined): ProviderPreferences | undefined {
  if (!p) return undefined;
  const maxIn = maxPriceNano(p.max_price?.prompt, 'prompt');
  const maxOut = maxPriceNano(p.max_price?.completion, 'completion');
  return {
    ...(p.order ? { order: p.order } : {}),
    ...(p.allow_fallbacks !== undefined ? { allowFallbacks: p.allow_fallbacks } : {}),
    ...(maxIn !== undefined ? { maxPriceInNano: maxIn } : {}),
    ...(maxOut !== undefined ? { maxPriceOutNano: maxOut } : {}),
  };
}

/** OpenAI's base64 encoding: each vector as little-endian float32 bytes (what the SDKs send by default). */
function toBase64Embeddings<T extends Record<string, unknown>>(response: T): T {
  const data = response.data as { embedding?: unknown }[] | undefined;
  if (!Array.isArray(data)) return response;
  return {
    ...response,
    data: data.map((d) =>
      Array.isArray(d.embedding)
        ? {
            ...d,
            embedding: Buffer.from(new Float32Array(d.embedding as number[]).buffer).toString('base64'),
          }
        : d,
    ),
  };
}
