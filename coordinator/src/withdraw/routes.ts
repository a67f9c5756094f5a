import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { ChainRouteOptions } from '../app-context.js';
import { withdraw } from './withdraw.js';

/** POST /api/keys/proxy/withdraw (JWT): tokens from the proxy wallet to any address. */
export async function withdrawRoutes(
  app: FastifyInstance,
  { ctx, services, outbox }: ChainRouteOptions,
): Promise<void> {
  app.post(
    '/api/keys/proxy/withdraw',
    {
      onRequest: app.requireUser,
      schema: {
        summary: 'Send native token or a stable from your proxy wallet to any address',
        tags: ['wallets'],
        security: [{ bearerJwt: [] }],
        body: Type.Object(
          {
            to: Type.String({ description: 'EVM address', maxLength: 64 }),
            token: Type.String({ description: 'native | USD.s | USDT.s | USDC.s', maxLength: 16 }),
            amount: Type.String({
              description: 'Decimal amount in whole tokens, e.g. "12.5"',
              maxLength: 64,
            }),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            id: Type.String(),
            status: Type.Literal('sent'),
            txId: Type.String(),
            to: Type.String(),
            token: Type.String(),
            amount: Type.String(),
          }),
        },
      },
    },
    async (request) => {
      const body = request.body as { to: string; token: string; amount: string };
      return withdraw(
        { db: ctx.db, services: services(), clock: ctx.clock, outbox: outbox() },
        { user: request.user!, ...body },
      );
    },
  );
}
