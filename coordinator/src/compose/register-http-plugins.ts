import cors from '@fastify/cors';
import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import type { CoordinatorConfig } from '../config.js';
import { securityHeaders } from '../security-headers.js';

/**
 * What every route gets, registered before any: security headers, CORS, and the OpenAPI
 * collector (every operation with an id).
 */
export async function registerHttpPlugins(app: FastifyInstance, config: CoordinatorConfig): Promise<void> {
  await app.register(securityHeaders);
  await app.register(cors, {
    origin: config.corsOrigins.includes('*') ? '*' : [...config.corsOrigins],
    methods: ['GET', 'POST', 'DELETE', 'OPTIONS'],
    // Any request header (the browser SDKs send x-stainless-*, openai-organization, …): the
    // preflight's Access-Control-Request-Headers are echoed. Credentials are bearer tokens, never
    // cookies, so this opens nothing.
    exposedHeaders: [
      'x-request-id',
      'x-gpumesh-node',
      'retry-after',
      'x-ratelimit-limit',
      'x-ratelimit-remaining',
      'x-ratelimit-reset',
    ],
    maxAge: 600,
  });
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'gpumesh',
        version: '0.1.0',
        description: 'Wallet sign-in, credits and OpenAI-compatible inference.',
      },
      servers: [{ url: config.publicUrl }],
      components: {
        securitySchemes: {
          bearerJwt: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
          apiKey: { type: 'http', scheme: 'bearer', description: 'sk- inference key' },
        },
      },
    },
    // Every operation has an id: its own, or one made from its method and path (stable, unique).
    transform: ({ schema, url, route }) => ({
      schema: { ...schema, operationId: schema?.operationId ?? operationIdOf(String(route.method), url) },
      url,
    }),
  });
}

/** `GET /api/router/keys/:id` → `getApiRouterKeysById`: an operation id from the method and path. */
function operationIdOf(method: string, url: string): string {
  const words = url
    .split('/')
    .filter(Boolean)
    .map((part) => (part.startsWith(':') ? `by-${part.slice(1)}` : part))
    .flatMap((part) => part.split(/[^A-Za-z0-9]+/))
    .filter(Boolean);
  return [method.toLowerCase(), ...words.map((w) => w[0]!.toUpperCase() + w.slice(1))].join('');
}
