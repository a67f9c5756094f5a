/**
 * OpenRouter's model routes, public as OpenRouter's are: GET /api/v1/models (the live models, in
 * its SDK's `Model` shape, paged), /api/v1/models/count, /api/v1/model/{author}/{slug} (one),
 * /api/v1/embeddings/models (those that embed) and GET /api/v1/models/{author}/{slug}/endpoints
 * (each node serving the model as an endpoint: price, context, quantisation, uptime, verified
 * status); /api/v1/models/user (the same list, with the caller's key: no per-user filters here).
 */

import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance, onRequestHookHandler } from 'fastify';
import type { AppContext } from '../app-context.js';
import { ApiError } from '../errors.js';
import { uptimeOf } from '../hub/node-sessions.js';
import type { CatalogModel } from '../router/build-catalog.js';
import type { Entry } from '../router/pick-index.js';
import { quantizationOf } from '../router/quantization.js';
import type { Router } from '../router/router.js';
import type { Standings } from './live-catalog.js';
import {
  architectureOf,
  nanoPerMillionToUsd,
  openRouterModel,
  unionOfParameters,
} from './open-router-model.js';

/** Most models one page of /api/v1/models holds (OpenRouter's SDK asks for 500). */
const MAX_PAGE = 1000;
const MINUTE_MS = 60_000;
/** Presence states a listed endpoint is up in (EndpointStatus 0); any other is -1 (degraded). */
const UP_STATES: ReadonlySet<string> = new Set(['online', 'busy']);
const API_KEY = [{ apiKey: [] }];
const Digits = Type.String({ pattern: '^[0-9]{1,6}$' });
const CommaList = Type.String({ maxLength: 512 });
/**
 * The filters of OpenRouter's list that the catalog can answer; any other (its benchmark indices,
 * regions, categories) is 400 naming it, never ignored.
 */
const ModelsQuery = Type.Object(
  {
    offset: Type.Optional(Digits),
    limit: Type.Optional(Digits),
    q: Type.Optional(Type.String({ maxLength: 256 })),
    supported_parameters: Type.Optional(CommaList),
    input_modalities: Type.Optional(CommaList),
    output_modalities: Type.Optional(CommaList),
    model_authors: Type.Optional(CommaList),
  },
  { additionalProperties: false },
);
/** The filters OpenRouter's count, user list and embeddings list take. */
const CountQuery = Type.Object(
  { output_modalities: Type.Optional(CommaList) },
  { additionalProperties: false },
);
const PageQuery = Type.Object(
  {
    offset: Type.Optional(Digits),
    limit: Type.Optional(Digits),
    output_modalities: Type.Optional(CommaList),
  },
  { additionalProperties: false },
);
const ModelParams = Type.Object(
  {
    author: Type.String({ minLength: 1, maxLength: 128 }),
    slug: Type.String({ minLength: 1, maxLength: 256 }),
  },
  { additionalProperties: false },
);

export async function openRouterModelRoutes(
  app: FastifyInstance,
  options: {
    ctx: AppContext;
    router: Router;
    standings?: Standings | undefined;
    catalog: () => readonly CatalogModel[];
    /** A listed model's `created` (model-routes.ts: the catalog's date, else its first listing). */
    createdOf: (id: string) => number;
    apiKey: onRequestHookHandler;
  },
): Promise<void> {
  const { ctx, router, standings, catalog, createdOf, apiKey } = options;
  const index = router.index;
  let built: { models: readonly CatalogModel[]; list: Record<string, unknown>[] } | undefined;
  /** The list, made again only when the catalog was (liveCatalog's versions), not per request. */
  const list = (): Record<string, unknown>[] => {
    const models = catalog();
    if (built?.models === models) return built.list;
    const facts = (m: CatalogModel) => ({
      created: createdOf(m.id),
      name: ctx.catalog.models.find((c) => c.id === m.id)?.name,
      supportedParameters: unionOfParameters(live(m.id)),
    });
    built = { models, list: models.map((m) => openRouterModel(m, facts(m))) };
    return built.list;
  };
  const live = (id: string): Entry[] =>
    [...(index.offers(id)?.values() ?? [])].filter((e) => UP_STATES.has(e.node.state));
  /** One page of the list as OpenRouter's `ModelsListResponse`: data, total_count, links.next. */
  const page = (query: Static<typeof ModelsQuery>, path: string) => {
    const all = list().filter(matches(query));
    const offset = Number(query.offset ?? 0);
    const limit = Math.min(MAX_PAGE, Math.max(1, Number(query.limit ?? MAX_PAGE)));
    const data = all.slice(offset, offset + limit);
    const rest = offset + data.length < all.length;
    const next = rest ? `${path}?offset=${offset + data.length}&limit=${limit}` : null;
    return { data, total_count: all.length, links: { next } };
  };

  app.get(
    '/api/v1/models',
    {
      schema: {
        tags: ['v1'],
        operationId: 'listModelsOpenRouter',
        summary: "Models live nodes serve now, in OpenRouter's shape (public, as OpenRouter's)",
        querystring: ModelsQuery,
      },
    },
    async (request) => page(request.query as Static<typeof ModelsQuery>, '/api/v1/models'),
  );

  app.get(
    '/api/v1/models/user',
    {
      onRequest: apiKey,
      schema: {
        tags: ['v1'],
        operationId: 'listModelsUser',
        summary: "The models list for the caller's key (no per-user filters here: the public list)",
        security: API_KEY,
        querystring: PageQuery,
      },
    },
    async (request) => page(request.query as Static<typeof PageQuery>, '/api/v1/models/user'),
  );

  app.get(
    '/api/v1/models/count',
    {
      schema: {
        tags: ['v1'],
        operationId: 'countModels',
        summary: 'How many models live nodes serve now (public)',
        querystring: CountQuery,
      },
    },
    async (request) => ({
      data: { count: list().filter(matches(request.query as Static<typeof CountQuery>)).length },
    }),
  );

  app.get(
    '/api/v1/embeddings/models',
    {
      schema: {
        tags: ['v1'],
        operationId: 'listEmbeddingsModels',
        summary: "The live models that give embeddings, in the models list's shape (public)",
        querystring: PageQuery,
      },
    },
    async (request) =>
      page(
        { ...(request.query as Static<typeof PageQuery>), output_modalities: 'embeddings' },
        '/api/v1/embeddings/models',
      ),
  );

  app.get(
    '/api/v1/model/:author/:slug',
    {
      schema: {
        tags: ['v1'],
        operationId: 'getModelOpenRouter',
        summary: "One live model in OpenRouter's shape (public)",
        params: ModelParams,
      },
    },
    async (request) => {
      const { author, slug } = request.params as Static<typeof ModelParams>;
      const id = `${author}/${slug}`;
      const model = list().find((m) => m.id === id);
      if (!model)
        throw new ApiError('model_not_found', `No live node serves the model "${id}".`, { param: 'model' });
      return { data: model };
    },
  );

  app.get(
    '/api/v1/models/:author/:slug/endpoints',
    {
      schema: {
        tags: ['v1'],
        operationId: 'listEndpoints',
        summary: 'Each node serving a model: price, context, quantization, uptime, verified status',
        params: ModelParams,
      },
    },
    async (request) => {
      const { author, slug } = request.params as Static<typeof ModelParams>;
      const id = `${author}/${slug}`;
      const model = catalog().find((m) => m.id === id);
      const entries = live(id);
      if (!model || entries.length === 0)
        throw new ApiError('model_not_found', `No live node serves the model "${id}".`, { param: 'model' });
      const ids = entries.map((e) => e.node.nodeId);
      const now = ctx.clock.now();
      const isLive = (nodeId: string) => ids.some((n) => n.toLowerCase() === nodeId);
      const uptime = (minutes: number) =>
        uptimeOf(ctx.db, ids, { from: now - minutes * MINUTE_MS, to: now }, isLive);
      const [last5m, last30m, last1d] = await Promise.all([uptime(5), uptime(30), uptime(24 * 60)]);
      const share = (map: Map<string, number>, nodeId: string) => map.get(nodeId.toLowerCase()) ?? null;
      const catalogModel = ctx.catalog.models.find((c) => c.id === id);
      return {
        data: {
          id,
          name: catalogModel?.name ?? id,
          created: createdOf(id),
          description: `${model.family} model served by ${entries.length} gpumesh node${entries.length === 1 ? '' : 's'}`,
          architecture: architectureOf(model.family),
          endpoints: entries.map((e) => {
            const parameters = e.offer.parameters ?? [];
            const tools = parameters.includes('tool_choice');
            return {
              name: `${e.node.nodeId} | ${id}`,
              model_id: id,
              model_name: catalogModel?.name ?? id,
              provider_name: e.node.nodeId,
              tag: e.node.nodeId.toLowerCase(),
              context_length: e.offer.contextLength,
              max_completion_tokens: null,
              max_prompt_tokens: null,
              pricing: {
                prompt: nanoPerMillionToUsd(e.priceInNano),
                completion: nanoPerMillionToUsd(e.priceOutNano),
                request: '0',
                image: '0',
              },
              quantization: quantizationOf(e.offer.quant),
              status: UP_STATES.has(e.node.state) && !e.node.health.demoted ? 0 : -1,
              uptime_last_5m: share(last5m, e.node.nodeId),
              uptime_last_30m: share(last30m, e.node.nodeId),
              uptime_last_1d: share(last1d, e.node.nodeId),
              // Not measured as percentiles (the router keeps a latency average per node).
              latency_last_30m: null,
              throughput_last_30m: null,
              supported_parameters: parameters,
              supports_implicit_caching: false,
              supports_tool_choice: { auto: tools, function: tools, none: tools, required: tools },
              // Ours: the trust layer's verdict (probation until verified, trust/standing/standings.ts).
              verified: standings ? standings.trusted(e.node.nodeId) : true,
              weights_sha256: e.offer.sha256 ?? null,
            };
          }),
        },
      };
    },
  );
}

/** The list's filters (comma lists match when the model has every item asked). */
function matches(query: Static<typeof ModelsQuery>) {
  const items = (v: string | undefined) =>
    v
      ?.split(',')
      .map((s) => s.trim())
      .filter(Boolean) ?? [];
  const params = items(query.supported_parameters);
  const inputs = items(query.input_modalities);
  const outputs = items(query.output_modalities);
  const authors = items(query.model_authors);
  const q = query.q?.toLowerCase();
  return (m: Record<string, unknown>) => {
    const id = m.id as string;
    const arch = m.architecture as { input_modalities: string[]; output_modalities: string[] };
    const supported = m.supported_parameters as string[];
    if (q && !id.toLowerCase().includes(q) && !String(m.name).toLowerCase().includes(q)) return false;
    if (!params.every((p) => supported.includes(p))) return false;
    if (!inputs.every((x) => arch.input_modalities.includes(x))) return false;
    if (!outputs.every((x) => arch.output_modalities.includes(x))) return false;
    if (authors.length > 0 && !authors.includes(id.split('/')[0]!)) return false;
    return true;
  };
}
