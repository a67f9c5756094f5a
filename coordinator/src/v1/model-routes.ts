/**
 * The models live nodes serve now: /v1/models (OpenAI's list and retrieve, sk- key), OpenRouter's
 * /api/v1/models and its endpoints (openrouter-model-routes.ts, public) and /api/router/models (the router catalog with its median prices, session JWT).
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, onRequestHookHandler } from 'fastify';
import type { AppContext } from '../app-context.js';
import { ApiError } from '../errors.js';
import type { Router } from '../router/router.js';
import { liveCatalog, type Standings } from './live-catalog.js';
import { catalogCreated } from './open-router-model.js';
import { openRouterModelRoutes } from './openrouter-model-routes.js';

const API_KEY = [{ apiKey: [] }];
const BEARER_JWT = [{ bearerJwt: [] }];

export async function modelRoutes(
  app: FastifyInstance,
  options: {
    ctx: AppContext;
    router: Router;
    /** Who is verified (trust/standing/standings.ts): the catalog's counts. */
    standings?: Standings | undefined;
    apiKey: onRequestHookHandler;
  },
): Promise<void> {
  const { ctx, router, standings, apiKey } = options;
  const catalog = liveCatalog(router.index, ctx.config.chain.nativeUsdPriceNano, standings);
  /** When each model was first listed here: `created` for the models the catalog has no date for. */
  const firstSeen = new Map<string, number>();
  /** A listed model's `created` (unix seconds): the catalog's date of its weights, else its first listing. */
  const createdOf = (id: string): number => {
    const dated = catalogCreated(ctx.catalog, id);
    if (dated !== undefined) return dated;
    if (!firstSeen.has(id)) firstSeen.set(id, Math.floor(ctx.clock.now() / 1000));
    return firstSeen.get(id)!;
  };

  /** A catalog entry as OpenAI's model object, with our fields beside (family, context, pricing). */
  const modelObject = (m: ReturnType<typeof catalog>[number]) => ({
    id: m.id,
    object: 'model',
    created: createdOf(m.id),
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
  await openRouterModelRoutes(app, { ctx, router, standings, catalog, createdOf, apiKey });

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
}
