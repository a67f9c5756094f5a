import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { RouteEntry } from '../app-context.js';
import type { CoordinatorConfig } from '../config.js';
import { errorHandler } from '../error-handler.js';
import { ApiError } from '../errors.js';
import { exceedsJsonDepth } from '../exceeds-json-depth.js';
import { notFoundHandler } from '../not-found-handler.js';
import { newRequestId } from '../request-id.js';
import { allowedMethods } from './allowed-methods.js';

/**
 * The fastify instance every route is added to, before any plugin: body limits, schema checking
 * without coercion, our request ids, OpenRouter's /api/v1 paths, the common error shape (a 405's
 * Allow from `routes`), and JSON bodies refused past `config.bodyMaxDepth` before they parse.
 */
export function createFastify(
  config: CoordinatorConfig,
  logger: FastifyServerOptions['logger'] | undefined,
  routes: readonly RouteEntry[],
): FastifyInstance {
  const app = Fastify({
    logger: logger ?? {
      level: config.logLevel,
      redact: ['req.headers.authorization', 'req.headers.cookie'],
    },
    bodyLimit: config.bodyLimitBytes,
    trustProxy: config.trustProxy,
    // Unknown body fields are refused (additionalProperties: false), not silently dropped. No type
    // coercion: it turned `max_tokens: false` into null ("no limit") and `temperature: null` into 0.
    // Query strings and path params declare only string fields (app.test.ts checks the route table),
    // so they need none either.
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, useDefaults: true } },
    routerOptions: { maxParamLength: 200 },
    // Every response carries its id (x-request-id, set below), ours, never the client's.
    genReqId: () => newRequestId(),
    // OpenRouter's base URL ends in /api/v1: every /v1 route answers there too (account-routes.ts
    // keeps OpenRouter's own /api/v1 paths).
    rewriteUrl: (request) => openRouterPath(request.url ?? '/'),
    // Router-level failures (bad URL encoding, over-long params) answer in the common shape too.
    frameworkErrors: (error, request, reply) => errorHandler(error, request, reply),
  });

  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler(notFoundHandler((path) => allowedMethods(routes, path)));
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  // JSON bodies nested deeper than bodyMaxDepth are refused before they are parsed: deeper ones
  // parse, then overflow the stack of a recursive walk later (a 500 in the frame encoder). The
  // parse itself stays fastify's (secure-json-parse, refusing __proto__ and constructor.prototype).
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (exceedsJsonDepth(text, config.bodyMaxDepth)) {
      const error = new ApiError('invalid_request', `JSON nested deeper than ${config.bodyMaxDepth} levels.`);
      done(error, undefined);
      return;
    }
    parseJson(request, text, done);
  });
  return app;
}

/**
 * OpenRouter's own /api/v1 paths (v1/account-routes.ts, v1/openrouter-model-routes.ts); any other
 * /api/v1 path is its /v1 route.
 */
const OPENROUTER_OWN =
  /^\/api\/v1\/(key|generation|credits|models|models\/(count|user)|model\/[^?#]+|embeddings\/models|models\/[^?#]+\/endpoints)(?:[?#]|$)/;

function openRouterPath(url: string): string {
  return url.startsWith('/api/v1/') && !OPENROUTER_OWN.test(url) ? url.slice(4) : url;
}
