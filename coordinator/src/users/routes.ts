import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app-context.js';
import { ApiError } from '../errors.js';
import { getUser } from './get-user.js';
import { readCredits } from './read-credits.js';

/** GET /api/user: the signed-in user's record with credits in USD. */
export async function userRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  app.get(
    '/api/user',
    {
      onRequest: app.requireUser,
      schema: {
        summary: 'Your user record: address, credits (USD), creation time',
        tags: ['user'],
        security: [{ bearerJwt: [] }],
        response: {
          200: Type.Object({
            id: Type.String(),
            address: Type.String(),
            credits: Type.Object({ balance: Type.Number(), spend: Type.Number() }),
            createdAt: Type.String({ description: 'ISO 8601' }),
          }),
        },
      },
    },
    async (request) => {
      const user = await getUser(ctx.db, request.user!.id);
      if (!user) throw new ApiError('invalid_credential', 'The user of this token no longer exists.');
      const credits = await readCredits(ctx.ledger, user.id);
      return {
        id: user.id,
        address: user.address,
        credits,
        createdAt: new Date(user.createdAtMs).toISOString(),
      };
    },
  );
}
