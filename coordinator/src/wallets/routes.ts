import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app-context.js';
import { ApiError } from '../errors.js';
import { getWallets } from './get-wallets.js';

const BEARER_JWT = [{ bearerJwt: [] }];

/** GET /api/keys/proxy and GET /api/keys/native: the signed-in user's wallet identifiers. */
export async function walletRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  app.get(
    '/api/keys/proxy',
    {
      onRequest: app.requireUser,
      schema: {
        summary: 'Address of the proxy wallet that holds your tokens and pays for inference',
        tags: ['wallets'],
        security: BEARER_JWT,
        response: { 200: Type.Object({ proxyAddress: Type.String() }) },
      },
    },
    async (request) => {
      const wallets = await getWallets(ctx.db, request.user!.id);
      if (!wallets) throw new ApiError('not_found', 'No wallet yet.');
      return { proxyAddress: wallets.proxyAddress };
    },
  );
  app.get(
    '/api/keys/native',
    {
      onRequest: app.requireUser,
      schema: {
        summary: 'Native-chain account (staking, voting, governance) and its public key',
        tags: ['wallets'],
        security: BEARER_JWT,
        response: { 200: Type.Object({ nativeAccount: Type.String(), publicKey: Type.String() }) },
      },
    },
    async (request) => {
      const wallets = await getWallets(ctx.db, request.user!.id);
      if (!wallets) throw new ApiError('not_found', 'No wallet yet.');
      return { nativeAccount: wallets.nativeAccount, publicKey: wallets.publicKey };
    },
  );
}
