import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app-context.js';
import { ApiError } from '../errors.js';
import { MAX_CLIENT_USD, nanoToUsd, usdToNano } from '../ledger/money.js';
import { createApiKey } from './create-api-key.js';
import { listApiKeys } from './list-api-keys.js';
import { revokeApiKey } from './revoke-api-key.js';

const BEARER_JWT = [{ bearerJwt: [] }];
/** Letters, digits, space and `_ . , : ( ) -`; 1–64 characters, not starting with a space. */
export const KEY_NAME_PATTERN = '^[A-Za-z0-9_.,:()-][A-Za-z0-9 _.,:()-]{0,63}$';

const CreateBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 64, pattern: KEY_NAME_PATTERN }),
    limit: Type.Optional(
      Type.Union([Type.Number({ minimum: 0 }), Type.Null()], {
        description: 'The most this key may spend, USD (absent or null: no limit but the balance)',
      }),
    ),
  },
  { additionalProperties: false },
);
const KeyParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_]+$' }),
});
const KeyInfo = Type.Object({
  id: Type.String(),
  name: Type.String(),
  prefix: Type.String(),
  createdAt: Type.String(),
  lastUsedAt: Type.Union([Type.String(), Type.Null()]),
  status: Type.Union([Type.Literal('active'), Type.Literal('revoked')]),
  spend: Type.Number({ description: 'USD charged through this key' }),
  limit: Type.Union([Type.Number(), Type.Null()], { description: 'USD this key may spend; null: no limit' }),
});

/** POST/GET /api/router/keys, DELETE /api/router/keys/:id — the signed-in user's inference keys. */
export async function keysRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  app.post<{ Body: Static<typeof CreateBody> }>(
    '/api/router/keys',
    {
      onRequest: app.requireUser,
      schema: {
        summary: 'Create an inference API key (sk-…); the secret is shown only in this response',
        tags: ['keys'],
        security: BEARER_JWT,
        body: CreateBody,
        response: {
          200: Type.Object({
            key: Type.String(),
            id: Type.String(),
            name: Type.String(),
            prefix: Type.String(),
            createdAt: Type.String(),
            limit: Type.Union([Type.Number(), Type.Null()]),
          }),
        },
      },
    },
    async (request) => {
      const { limit } = request.body;
      const limitNano = limit === undefined || limit === null ? null : usdToNano(limit);
      if (limitNano === null && limit !== undefined && limit !== null) {
        throw new ApiError('invalid_request', `limit must be a USD amount from 0 to ${MAX_CLIENT_USD}.`, {
          param: 'limit',
        });
      }
      const created = await createApiKey(ctx.db, ctx.clock, {
        userId: request.user!.id,
        name: request.body.name,
        maxActive: ctx.config.maxActiveKeys,
        limitNano,
      });
      return {
        ...created,
        createdAt: new Date(created.createdAtMs).toISOString(),
        limit: limitNano === null ? null : nanoToUsd(limitNano),
      };
    },
  );

  app.get(
    '/api/router/keys',
    {
      onRequest: app.requireUser,
      schema: {
        summary: 'List your API keys (prefix only, never the secret)',
        tags: ['keys'],
        security: BEARER_JWT,
        response: { 200: Type.Object({ data: Type.Array(KeyInfo) }) },
      },
    },
    async (request) => {
      const keys = await listApiKeys(ctx, request.user!.id);
      return {
        data: keys.map((k) => ({
          id: k.id,
          name: k.name,
          prefix: k.prefix,
          createdAt: new Date(k.createdAtMs).toISOString(),
          lastUsedAt: k.lastUsedAtMs === null ? null : new Date(k.lastUsedAtMs).toISOString(),
          status: k.status,
          spend: nanoToUsd(k.spendNano),
          limit: k.limitNano === null ? null : nanoToUsd(k.limitNano),
        })),
      };
    },
  );

  app.delete<{ Params: Static<typeof KeyParams> }>(
    '/api/router/keys/:id',
    {
      onRequest: app.requireUser,
      schema: {
        summary: 'Revoke one of your API keys (it stops authenticating at once)',
        tags: ['keys'],
        security: BEARER_JWT,
        params: KeyParams,
        response: { 200: Type.Object({ id: Type.String(), status: Type.Literal('revoked') }) },
      },
    },
    async (request) =>
      revokeApiKey(
        ctx.db,
        ctx.clock,
        { userId: request.user!.id, keyId: request.params.id },
        ctx.acceptedKeys,
      ),
  );
}
