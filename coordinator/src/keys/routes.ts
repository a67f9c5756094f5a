import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app-context.js';
import { nanoToUsd } from '../ledger/money.js';
import { createApiKey } from './create-api-key.js';
import { listApiKeys } from './list-api-keys.js';
import { revokeApiKey } from './revoke-api-key.js';

const BEARER_JWT = [{ bearerJwt: [] }];
/** Letters, digits, space and `_ . , : ( ) -`; 1–64 characters, not starting with a space. */
export const KEY_NAME_PATTERN = '^[A-Za-z0-9_.,:()-][A-Za-z0-9 _.,:()-]{0,63}$';

const CreateBody = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 64, pattern: KEY_NAME_PATTERN }) },
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
          }),
        },
      },
    },
    async (request) => {
      const created = await createApiKey(ctx.db, ctx.clock, {
        userId: request.user!.id,
        name: request.body.name,
        maxActive: ctx.config.maxActiveKeys,
      });
      return { ...created, createdAt: new Date(created.createdAtMs).toISOString() };
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
      const keys = await listApiKeys(ctx.db, request.user!.id);
      return {
        data: keys.map((k) => ({
          id: k.id,
          name: k.name,
          prefix: k.prefix,
          createdAt: new Date(k.createdAtMs).toISOString(),
          lastUsedAt: k.lastUsedAtMs === null ? null : new Date(k.lastUsedAtMs).toISOString(),
          status: k.status,
          spend: nanoToUsd(k.spendNano),
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
