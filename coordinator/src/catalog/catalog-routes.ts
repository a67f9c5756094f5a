import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app-context.js';
import { CatalogSchema } from './catalog.js';

/** How long clients and proxies may keep the catalog (it changes with a coordinator release). */
const CATALOG_MAX_AGE_S = 300;

/**
 * `GET /api/models/catalog`: the canonical model ids this coordinator lists known weights under,
 * with each model's GGUF files (quantisation, size, SHA-256) and a suggested price band. Public:
 * node owners read it to pick and verify files (`gpumesh-node models pull`).
 */
export async function catalogRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  app.get(
    '/api/models/catalog',
    {
      schema: {
        summary: 'The model catalog: canonical ids and their known GGUF files (SHA-256)',
        tags: ['models'],
        response: { 200: CatalogSchema },
      },
    },
    async (_request, reply) => {
      reply.header('cache-control', `public, max-age=${CATALOG_MAX_AGE_S}`);
      return { models: ctx.catalog.models };
    },
  );
}
