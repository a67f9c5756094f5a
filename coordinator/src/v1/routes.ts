/**
 * The inference router's HTTP surface: /v1 (OpenAI-compatible, sk- keys only) and the app-API
 * routes /api/router/models and /api/router/usage (session JWT).
 */
import type { JobKind } from '@gpumesh/protocol';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../app-context.js';
import { ApiError } from '../errors.js';
import { KeyLimits } from '../keys/key-limits.js';
import { buildCatalog, type CatalogModel } from '../router/build-catalog.js';
import { routeRequest } from '../router/route-request.js';
import type { Router } from '../router/router.js';
import type { RouteDeps } from '../router/types.js';
import type { Probation } from '../trust/probation.js';
import { isDay } from '../usage/is-day.js';
import { summarizeUsage } from '../usage/summarize-usage.js';
import { accountRoutes } from './account-routes.js';
import { dropNullFields } from './drop-null-fields.js';
import { jobBuilder } from './job-for.js';
import { audioRoutes } from './media/audio-routes.js';
import { hasImageParts, imageUrlBytes, resolveImages } from './media/resolve-images.js';
import { requireApiKey } from './require-api-key.js';
import { responsesRoutes } from './responses/routes.js';
import {
  ChatCompletionBody,
  CompletionBody,
  EmbeddingBody,
  MAX_EMBEDDING_INPUTS,
  type ProviderPreferencesBody,
  UsageQuery,
} from './schemas.js';
import { openSse } from './sse.js';
import { watchClient } from './watch-client.js';

export type RouterRoutesOptions = {
  ctx: AppContext;
  /** Where picked jobs go (hub/hub-plugin.ts builds it). */
  router: Router;
  /** New nodes' capped share of traffic (trust/probation.ts). */
  probation?: Probation;
  /** Spot checks of live completions (trust/canary-runner.ts). */
  spotCheck?: RouteDeps['spotCheck'];
  /** The shapes of client jobs canaries are made like (trust/traffic-shapes.ts). */
  noteTraffic?: RouteDeps['noteTraffic'];
};

const API_KEY = [{ apiKey: [] }];
const BEARER_JWT = [{ bearerJwt: [] }];

/** Errors after which the next model of a `models` list is tried (nothing was sent yet). */
const FALLBACK_CODES: ReadonlySet<string> = new Set([
  'model_not_found',
  'no_provider_available',
  'provider_error',
  'provider_timeout',
  'context_length_exceeded',
]);

/** Longest usage window one summary covers. */
export const MAX_USAGE_RANGE_DAYS = 366;
const DAY_MS = 86_400_000;

export async function routerRoutes(app: FastifyInstance, options: RouterRoutesOptions): Promise<void> {
  const { ctx, router, probation, spotCheck, noteTraffic } = options;
  const { config } = ctx;
  const deps: RouteDeps = {
    db: ctx.db,
    ledger: ctx.ledger,
    router,
    ...(probation ? { probation } : {}),
    ...(spotCheck ? { spotCheck } : {}),
    ...(noteTraffic ? { noteTraffic } : {}),
    keyLimits: new KeyLimits(ctx.db),
    settings: {
      platformFeeBps: config.platformFeeBps,
      jobTimeoutMs: config.router.jobTimeoutMs,
      maxAttempts: config.router.maxAttempts,
      ttftMs: config.router.ttftMs,
      prefillMsPerToken: config.router.prefillMsPerToken,
      minTokensPerSecond: config.router.minTokensPerSecond,
    },
    clock: ctx.clock,
    metrics: app.metrics,
    log: app.log,
  };
  const apiKey = requireApiKey(ctx.db, ctx.acceptedKeys);
  const catalog = () =>
    buildCatalog(
      router.index,
      config.chain.nativeUsdPriceNano,
      probation ? (nodeId) => probation.trusted(nodeId) : undefined,
    );

  /** A catalog entry as OpenAI's model object, with our fields beside (family, context, pricing). */
  const modelObject = (m: ReturnType<typeof catalog>[number]) => ({
    id: m.id,
    object: 'model',
    created: 0,
    owned_by: 'gpumesh',
    family: m.family,
    context_length: m.contextLength,
    live_nodes: m.liveNodes,
    verified_nodes: m.verifiedNodes,
    probation_nodes: m.probationNodes,
    pricing: { prompt: m.cheapest.prompt, completion: m.cheapest.completion, unit: m.unit },
  });

  app.get(
    '/v1/models',
    {
      onRequest: apiKey,
      schema: {
        tags: ['v1'],
        security: API_KEY,
        operationId: 'listModels',
        summary: 'Models live nodes serve now (OpenAI list)',
      },
    },
    async () => ({ object: 'list', data: catalog().map(modelObject) }),
  );
  // OpenRouter's list: prices as USD per token (decimal strings), the context, the modalities.
  app.get(
    '/api/v1/models',
    {
      onRequest: apiKey,
      schema: {
        tags: ['v1'],
        security: API_KEY,
        operationId: 'listModelsOpenRouter',
        summary: "Models live nodes serve now, in OpenRouter's shape",
      },
    },
    async () => ({ data: catalog().map(openRouterModel) }),
  );

  const retrieveModel = async (id: string) => {
    const model = catalog().find((m) => m.id === id);
    if (!model)
      throw new ApiError('model_not_found', `No live node serves the model "${id}".`, { param: 'model' });
    return modelObject(model);
  };
  app.get(
    '/v1/models/:model',
    {
      onRequest: apiKey,
      schema: {
        tags: ['v1'],
        security: API_KEY,
        operationId: 'retrieveModel',
        summary: 'One model live nodes serve now (OpenAI retrieve)',
        params: Type.Object(
          { model: Type.String({ minLength: 1, maxLength: 256 }) },
          { additionalProperties: false },
        ),
      },
    },
    async (request) => retrieveModel((request.params as { model: string }).model),
  );
  // Model ids may hold a slash (org/name); a client that does not encode it lands here.
  app.get(
    '/v1/models/*',
    {
      onRequest: apiKey,
      schema: {
        hide: true,
        params: Type.Object(
          { '*': Type.String({ minLength: 1, maxLength: 256 }) },
          { additionalProperties: false },
        ),
      },
    },
    async (request) => retrieveModel((request.params as { '*': string })['*']),
  );

  app.get(
    '/api/router/models',
    {
      onRequest: app.requireUser,
      schema: {
        tags: ['router'],
        security: BEARER_JWT,
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
        security: BEARER_JWT,
        summary: 'Usage totals and breakdowns by model, key and day',
        querystring: UsageQuery,
      },
    },
    async (request) => {
      const q = request.query as UsageQuery;
      // The schema checks the shape only: 2026-13-45 would reach Date and make NaN (a 500).
      for (const param of ['from', 'to'] as const) {
        const day = q[param];
        if (day !== undefined && !isDay(day))
          throw new ApiError('invalid_request', `${param} must be a date, YYYY-MM-DD.`, { param });
      }
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
      return summarizeUsage(ctx, { userId: request.user!.id, from, to });
    },
  );

  const jobFor = jobBuilder(router, config);

  /**
   * Runs the request on `model`, then on each of `models` (OpenRouter's fallback list) while the
   * previous one had no node to serve it or failed before sending anything.
   */
  const infer = (asked: JobKind) => async (request: FastifyRequest, reply: FastifyReply) => {
    const startedAt = performance.now();
    let body = request.body as Record<string, unknown> & {
      model: string;
      models?: string[];
      provider?: ProviderPreferencesBody;
    };
    // The chat route's body limit has room for images (data URLs) only: the rest of the body is
    // held to the ordinary limit.
    if (asked === 'chat') {
      const length = Number(request.headers['content-length'] ?? Buffer.byteLength(JSON.stringify(body)));
      if (length - imageUrlBytes(body) > config.bodyLimitBytes) throw new ApiError('payload_too_large');
    }
    // A chat with image parts is a vision job: its images fetched and checked here, sent as data.
    let kind = asked;
    let promptTokensBound: number | undefined;
    if (kind === 'chat' && hasImageParts(body)) {
      kind = 'vision';
      const media = config.media;
      const resolved = await resolveImages(body.messages as Record<string, unknown>[], {
        maxImages: media.maxImages,
        maxBytes: media.maxImageBytes,
        timeoutMs: media.imageFetchTimeoutMs,
        allowAddresses: media.imageFetchAllowAddresses,
      });
      body = { ...body, messages: resolved.messages };
      promptTokensBound = resolved.promptTokensBound;
    }
    const models = [body.model, ...(body.models ?? []).filter((m) => m !== body.model)];
    const stream = kind !== 'embedding' && body.stream === true;
    const sink = stream ? openSse(request, reply, request.id) : undefined;
    const client = sink ? undefined : watchClient(request, reply);
    for (const [i, model] of models.entries()) {
      try {
        if (!sink) {
          const job = {
            ...jobFor(kind, request, body, model, startedAt, promptTokensBound),
            ...(client ? { client } : {}),
          };
          const result = await routeRequest(deps, job);
          reply.header('x-gpumesh-node', result.nodeId);
          if (kind === 'embedding' && body.encoding_format === 'base64')
            return toBase64Embeddings(result.response);
          return result.response;
        }
        await routeRequest(deps, jobFor(kind, request, body, model, startedAt, promptTokensBound), sink);
        return reply;
      } catch (error) {
        const next = i < models.length - 1 && !sink?.started;
        if (next && error instanceof ApiError && FALLBACK_CODES.has(error.code)) continue;
        if (!sink?.started) throw error; // nothing sent yet: a plain HTTP error
        const apiError = error instanceof ApiError ? error : new ApiError('internal_error');
        if (!sink.closed) sink.finish({ error: apiError.toBody().error });
        return reply;
      }
    }
    return reply; // unreachable: the last model returns or throws
  };

  await accountRoutes(app, { ctx, apiKey });
  await responsesRoutes(app, { ctx, deps, apiKey, jobFor });
  await app.register(audioRoutes, { ctx, deps, apiKey });

  const limits = { bodyLimit: ctx.config.bodyLimitBytes, preValidation: [dropNullFields, modelFromModels] };
  // Chat bodies may carry images as data URLs: room for the media limit's bytes as base64.
  const chatBodyLimit = ctx.config.bodyLimitBytes + Math.ceil((config.media.maxImageBytes * 4) / 3);
  app.post(
    '/v1/chat/completions',
    {
      ...limits,
      bodyLimit: chatBodyLimit,
      onRequest: apiKey,
      schema: {
        tags: ['v1'],
        security: API_KEY,
        operationId: 'createChatCompletion',
        body: ChatCompletionBody,
      },
    },
    infer('chat'),
  );
  app.post(
    '/v1/completions',
    {
      ...limits,
      onRequest: apiKey,
      schema: { tags: ['v1'], security: API_KEY, operationId: 'createCompletion', body: CompletionBody },
    },
    infer('completion'),
  );
  app.post(
    '/v1/embeddings',
    {
      ...limits,
      preValidation: [dropNullFields, countInputs],
      onRequest: apiKey,
      schema: { tags: ['v1'], security: API_KEY, operationId: 'createEmbedding', body: EmbeddingBody },
    },
    infer('embedding'),
  );
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

/**
 * Too many embedding inputs named as such (the schema's union would report the first branch's
 * error, "input: must be string").
 */
async function countInputs(request: FastifyRequest): Promise<void> {
  const input = (request.body as { input?: unknown } | null)?.input;
  if (Array.isArray(input) && input.length > MAX_EMBEDDING_INPUTS && typeof input[0] !== 'number') {
    throw new ApiError(
      'invalid_request',
      `input holds ${input.length} inputs; at most ${MAX_EMBEDDING_INPUTS} fit one request.`,
      { param: 'input' },
    );
  }
}

/** OpenRouter's `models` with no `model`: the first of them is the model (the rest its fallbacks). */
async function modelFromModels(request: FastifyRequest): Promise<void> {
  const body = request.body as { model?: unknown; models?: unknown } | null;
  if (!body || typeof body !== 'object' || body.model !== undefined) return;
  if (Array.isArray(body.models) && typeof body.models[0] === 'string') body.model = body.models[0];
}

/** A catalog entry in OpenRouter's model shape (with OpenAI's `object` and `owned_by` beside). */
function openRouterModel(m: CatalogModel): Record<string, unknown> {
  const perToken = (price: CatalogModel['cheapest']['prompt']) =>
    m.unit === 'per_million_tokens' ? nanoPerMillionToUsd(BigInt(price.usdNano)) : '0';
  const input =
    m.family === 'vision' ? ['text', 'image'] : m.family === 'voice' ? ['audio', 'text'] : ['text'];
  const output =
    m.family === 'embedding' ? ['embeddings'] : m.family === 'voice' ? ['audio', 'text'] : ['text'];
  return {
    id: m.id,
    name: m.id,
    object: 'model',
    owned_by: 'gpumesh',
    created: 0,
    description: `${m.family} model served by ${m.liveNodes} gpumesh node${m.liveNodes === 1 ? '' : 's'}`,
    context_length: m.contextLength,
    architecture: {
      modality: `${input.join('+')}->${output.join('+')}`,
      input_modalities: input,
      output_modalities: output,
      tokenizer: 'Other',
      instruct_type: null,
    },
    pricing: {
      prompt: perToken(m.cheapest.prompt),
      completion: perToken(m.cheapest.completion),
      request: '0',
      image: '0',
    },
    top_provider: { context_length: m.contextLength, max_completion_tokens: null, is_moderated: false },
    per_request_limits: null,
    live_nodes: m.liveNodes,
  };
}

/** Nanousd per million tokens as USD per token, a decimal string (1 nanousd/M = 1e-15 USD). */
function nanoPerMillionToUsd(nano: bigint): string {
  if (nano === 0n) return '0';
  const digits = nano.toString().padStart(16, '0');
  const whole = digits.slice(0, -15);
  const fraction = digits.slice(-15).replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : whole;
}
