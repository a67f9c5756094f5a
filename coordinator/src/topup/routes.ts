import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { ChainRouteOptions } from '../app-context.js';
import { PAYMENT_SOURCES, type PaymentSource } from '../chain/constants.js';
import { topup } from './topup.js';

const TopupResultSchema = Type.Object({
  status: Type.Union([Type.Literal('credited'), Type.Literal('pending')]),
  paymentId: Type.String(),
  source: Type.String(),
  amount: Type.Union([Type.String(), Type.Null()]),
  creditedUsd: Type.Number(),
  balance: Type.Number(),
});

/** POST /api/user/topup (JWT): credit a transfer to the proxy wallet, verified on chain. */
export async function topupRoutes(app: FastifyInstance, { ctx, services }: ChainRouteOptions): Promise<void> {
  app.post(
    '/api/user/topup',
    {
      onRequest: app.requireUser,
      schema: {
        summary: 'Credit a transfer you sent to your proxy wallet (200 credited, 202 pending)',
        tags: ['user'],
        security: [{ bearerJwt: [] }],
        body: Type.Object(
          {
            paymentId: Type.String({
              description: 'Hash of the transfer to your proxy wallet',
              maxLength: 80,
            }),
            source: Type.Union(
              PAYMENT_SOURCES.map((s) => Type.Literal(s)),
              { description: 'native | USD.s | USDT.s | USDC.s' },
            ),
            amountUsd: Type.Number({ minimum: 0 }),
          },
          { additionalProperties: false },
        ),
        response: { 200: TopupResultSchema, 202: TopupResultSchema },
      },
    },
    async (request, reply) => {
      const body = request.body as { paymentId: string; source: PaymentSource; amountUsd: number };
      const result = await topup(
        { db: ctx.db, ledger: ctx.ledger, services: services(), clock: ctx.clock },
        { user: request.user!, ...body },
      );
      return reply.status(result.status === 'pending' ? 202 : 200).send(result);
    },
  );
}
