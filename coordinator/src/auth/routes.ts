import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { getAddress } from 'viem';
import type { AppContext } from '../app-context.js';
import { findOrCreateUser } from '../users/find-or-create-user.js';
import { ensureWallets } from '../wallets/ensure-wallets.js';
import { createNonce } from './create-nonce.js';
import { issueToken } from './issue-token.js';
import { revokeToken } from './revoke-token.js';
import { verifySignIn } from './verify-sign-in.js';

const NonceQuery = Type.Object(
  {
    address: Type.String({
      pattern: '^0x[0-9a-fA-F]{40}$',
      description: '0x-prefixed wallet address, any case',
    }),
  },
  { additionalProperties: false },
);
const VerifyBody = Type.Object(
  {
    address: Type.String({ maxLength: 128 }),
    message: Type.String({ maxLength: 2048 }),
    signature: Type.String({ maxLength: 8192, description: '0x-prefixed EIP-191 (or EIP-1271) signature' }),
  },
  { additionalProperties: false },
);

/** Sign-in with a wallet: nonce → verify → JWT; logout revokes the JWT. */
export async function authRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const signInLimit = ctx.config.rateLimit.enabled
    ? {
        rateLimit: { max: ctx.config.rateLimit.signInMax, keyGenerator: (r: { ip: string }) => `ip:${r.ip}` },
      }
    : {};

  app.get<{ Querystring: Static<typeof NonceQuery> }>(
    '/api/auth/nonce',
    {
      config: signInLimit,
      schema: {
        summary: 'Step 1 of sign-in: the message to sign with your wallet (valid 10 minutes, single use)',
        tags: ['auth'],
        querystring: NonceQuery,
        response: { 200: Type.Object({ message: Type.String() }) },
      },
    },
    async (request) => {
      const { message } = await createNonce(ctx.db, ctx.config, ctx.clock, getAddress(request.query.address));
      return { message };
    },
  );

  app.post<{ Body: Static<typeof VerifyBody> }>(
    '/api/auth/verify',
    {
      config: signInLimit,
      schema: {
        summary: 'Step 2 of sign-in: send the signed message, receive a JWT valid 7 days',
        tags: ['auth'],
        body: VerifyBody,
        response: { 200: Type.Object({ token: Type.String() }) },
      },
    },
    async (request) => {
      const address = await verifySignIn(ctx.db, ctx.clock, ctx.chainClient, request.body);
      const user = await findOrCreateUser(ctx.db, ctx.clock, address);
      await ensureWallets(ctx.db, ctx.keyring, ctx.clock, user.id);
      const { token } = await issueToken(ctx.jwtKey, ctx.clock, ctx.config.jwtTtlS, user);
      return { token };
    },
  );

  app.post(
    '/api/auth/logout',
    {
      onRequest: app.requireUser,
      schema: {
        summary: 'Revoke the JWT this request carries',
        tags: ['auth'],
        security: [{ bearerJwt: [] }],
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      const user = request.user!;
      await revokeToken(ctx.db, ctx.clock, { jti: user.jti, exp: user.exp });
      return reply.status(204).send();
    },
  );
}
