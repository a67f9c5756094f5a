/**
 * `POST /api/provider/payout` — send your earnings on chain from the treasury (Idempotency-Key
 * header: a retry answers the first payout); `GET /api/provider/payouts` — your payouts, newest
 * first. Open payouts are settled from the chain at start and every `payouts.settleAfterMs`.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { ChainRouteOptions } from '../app-context.js';
import { PAYMENT_SOURCES } from '../chain/constants.js';
import { listPayouts, refuseWhileSuspended, requestPayout } from './payout.js';

const Payout = Type.Object({
  id: Type.String(),
  status: Type.String({ enum: ['pending', 'signed', 'sent', 'paid', 'failed'] }),
  token: Type.String(),
  amount: Type.String({ description: 'whole tokens, exact' }),
  amountUsd: Type.Number(),
  to: Type.String(),
  txId: Type.Union([Type.String(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
  createdAt: Type.String(),
});

export async function payoutRoutes(
  app: FastifyInstance,
  { ctx, services, outbox }: ChainRouteOptions,
): Promise<void> {
  app.post<{
    Body: { token: string; amount?: string; to?: string };
    Headers: { 'idempotency-key'?: string };
  }>(
    '/api/provider/payout',
    {
      onRequest: app.requireUser,
      schema: {
        summary: 'Send your earnings on chain from the treasury to your wallet',
        description:
          'Debits your earnings and sends the same value in the token you name. Stables pay 1 USD per token, rounded down to the token’s 6 decimals (the remainder stays in your earnings); the native token at the coordinator’s price. Send an Idempotency-Key header: a retry with it answers the first payout. 202 while the transfer waits for its receipt.',
        tags: ['provider'],
        security: [{ bearerJwt: [] }],
        headers: Type.Object({
          'idempotency-key': Type.Optional(Type.String({ pattern: '^[A-Za-z0-9._:-]{1,128}$' })),
        }),
        body: Type.Object(
          {
            token: Type.String({ enum: [...PAYMENT_SOURCES] }),
            amount: Type.Optional(
              Type.String({ maxLength: 40, description: 'USD, decimal string; default: all your earnings' }),
            ),
            to: Type.Optional(
              Type.String({ maxLength: 64, description: 'EVM address; default: your wallet' }),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 200: Payout, 202: Payout },
      },
    },
    async (request, reply) => {
      // A clear answer before the chain is touched (checked again where the earnings are debited).
      await refuseWhileSuspended(ctx.db, request.user!.address);
      const limits = ctx.config.payouts;
      const payout = await requestPayout(
        { store: ctx.store, services: services(), outbox: outbox(), clock: ctx.clock, limits },
        {
          owner: request.user!.address,
          token: request.body.token,
          amount: request.body.amount,
          to: request.body.to,
          idempotencyKey: request.headers['idempotency-key'],
        },
      );
      return reply.code(payout.status === 'paid' || payout.status === 'failed' ? 200 : 202).send(payout);
    },
  );

  app.get(
    '/api/provider/payouts',
    {
      onRequest: app.requireUser,
      schema: {
        summary: 'Your payouts, newest first (up to 100)',
        tags: ['provider'],
        security: [{ bearerJwt: [] }],
        response: { 200: Type.Object({ payouts: Type.Array(Payout) }) },
      },
    },
    async (request) => ({ payouts: await listPayouts(ctx.store, request.user!.address) }),
  );
}
