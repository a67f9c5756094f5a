/**
 * The inference router's HTTP surface: /v1 (OpenAI-compatible, sk- keys only) and the app-API
 * routes /api/router/models and /api/router/usage (session JWT). Inference is here; the model lists
 * are model-routes.ts, usage usage-routes.ts, a key's own reads account-routes.ts.
 */

import type { JobKind } from '@gpumesh/protocol';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../app-context.js';
import { ApiError } from '../errors.js';
import { KeyLimits } from '../keys/key-limits.js';
import { isOpenRouterRequest } from '../openrouter-error.js';
import { routeRequest } from '../router/route-request.js';
import type { Router } from '../router/router.js';
import type { RouteDeps } from '../router/types.js';
import type { Probation } from '../trust/standing/probation.js';
import { accountRoutes } from './account-routes.js';
import { checkPrompt } from './check-prompt.js';
import { dropNullFields } from './drop-null-fields.js';
import { jobBuilder, modelVariant } from './job-for.js';
import type { Standings } from './live-catalog.js';
import { audioRoutes } from './media/audio-routes.js';
import { hasImageParts, imageUrlBytes, resolveImages } from './media/resolve-images.js';
import {
  MIDDLE_OUT_ROUNDS,
  type MiddleOutReport,
  middleOut,
  overflowOf,
  wantsMiddleOut,
} from './middle-out.js';
import { modelRoutes } from './model-routes.js';
import { requireApiKey } from './require-api-key.js';
import { responsesRoutes } from './responses/routes.js';
import {
  ChatCompletionBody,
  CompletionBody,
  EmbeddingBody,
  MAX_EMBEDDING_INPUTS,
  type ProviderPreferencesBody,
} from './schemas.js';
import { openSse } from './sse.js';
import { usageRoutes } from './usage-routes.js';
import { watchClient } from './watch-client.js';

export type RouterRoutesOptions = {
  ctx: AppContext;
  /** Where picked jobs go (hub/hub-plugin.ts builds it). */
  router: Router;
  /** New nodes' capped share of traffic (trust/standing/probation.ts). */
  probation?: Probation;
  /** Who is verified (trust/standing/standings.ts): /v1/models' counts. */
  standings?: Standings;
  /** Spot checks of live completions (trust/checks/canary-runner.ts). */
  spotCheck?: RouteDeps['spotCheck'];
  /** The shapes of client jobs canaries are made like (trust/canaries/traffic-shapes.ts). */
  noteTraffic?: RouteDeps['noteTraffic'];
};

const API_KEY = [{ apiKey: [] }];

/** Errors after which the next model of a `models` list is tried (nothing was sent yet). */
const FALLBACK_CODES: ReadonlySet<string> = new Set([
  'model_not_found',
  'no_provider_available',
  'provider_error',
  'provider_timeout',
  'context_length_exceeded',
]);

export async function routerRoutes(app: FastifyInstance, options: RouterRoutesOptions): Promise<void> {
  const { ctx, router, probation, standings, spotCheck, noteTraffic } = options;
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
  await modelRoutes(app, { ctx, router, standings, apiKey });
  await usageRoutes(app, { ctx });

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
    const openRouter = isOpenRouterRequest(request);
    const squeezed: MiddleOutReport = { messagesRemoved: 0, charactersRemoved: 0 };
    for (const [i, model] of models.entries()) {
      for (let round = 0; ; round++) {
        try {
          if (squeezed.messagesRemoved + squeezed.charactersRemoved > 0) reportMiddleOut(reply, squeezed);
          if (!sink) {
            const job = {
              ...jobFor(kind, request, body, model, startedAt, promptTokensBound),
              ...(client ? { client } : {}),
            };
            const result = await routeRequest(deps, job);
            reply.header('x-gpumesh-node', result.nodeId);
            if (kind === 'embedding' && body.encoding_format === 'base64')
              return toBase64Embeddings(result.response);
            return squeezed.messagesRemoved + squeezed.charactersRemoved > 0
              ? { ...result.response, transforms: [middleOutMember(squeezed)] }
              : result.response;
          }
          await routeRequest(deps, jobFor(kind, request, body, model, startedAt, promptTokensBound), sink);
          return reply;
        } catch (error) {
          // Over the context: with middle-out, squeeze the prompt and send it again (nothing was sent).
          // A completion's one text prompt is squeezed as one message.
          const prompt = kind === 'completion' && typeof body.prompt === 'string';
          const squeeze =
            error instanceof ApiError &&
            error.code === 'context_length_exceeded' &&
            (error.param === 'messages' || (prompt && error.param === 'prompt')) &&
            round < MIDDLE_OUT_ROUNDS &&
            !sink?.started &&
            wantsMiddleOut(body, openRouter, router.index.maxContextLength(modelVariant(router, model).model))
              ? middleOut(
                  prompt
                    ? [{ role: 'user', content: body.prompt }]
                    : (body.messages as Record<string, unknown>[]),
                  overflowOf(error.message),
                )
              : undefined;
          if (squeeze) {
            body = prompt
              ? { ...body, prompt: squeeze.messages[0]!.content }
              : { ...body, messages: squeeze.messages };
            squeezed.messagesRemoved += squeeze.report.messagesRemoved;
            squeezed.charactersRemoved += squeeze.report.charactersRemoved;
            continue;
          }
          const next = i < models.length - 1 && !sink?.started;
          if (next && error instanceof ApiError && FALLBACK_CODES.has(error.code)) break;
          if (!sink?.started) throw error; // nothing sent yet: a plain HTTP error
          const apiError = error instanceof ApiError ? error : new ApiError('internal_error');
          if (!sink.closed) sink.finish({ error: apiError.toBody().error });
          return reply;
        }
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
      preValidation: [dropNullFields, modelFromModels, checkPrompt],
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

/** OpenRouter's report of what middle-out took, in the response's `transforms` (ours). */
function middleOutMember(report: MiddleOutReport): Record<string, unknown> {
  return {
    type: 'middle-out',
    messages_removed: report.messagesRemoved,
    characters_removed: report.charactersRemoved,
  };
}

/** The same as a header, so a stream reports it too (headers go out with its first chunk). */
function reportMiddleOut(reply: FastifyReply, report: MiddleOutReport): void {
  reply.header(
    'x-gpumesh-transforms',
    `middle-out; messages_removed=${report.messagesRemoved}; characters_removed=${report.charactersRemoved}`,
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
