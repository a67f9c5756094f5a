/**
 * Sign-in as a dev wallet of the local devnet, for a newcomer without a browser wallet
 * (`devWallets`, set by `npm start` only, refused by config.ts unless the chain is on this
 * machine): GET /api/auth/dev-wallets lists their addresses; POST /api/auth/dev-sign-in signs the
 * one-time message with the dev key here and answers the JWT, as /api/auth/verify would. 404
 * without dev wallets.
 */
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { getAddress } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { AppContext } from '../app-context.js';
import { ApiError } from '../errors.js';
import { findOrCreateUser } from '../users/find-or-create-user.js';
import { ensureWallets } from '../wallets/ensure-wallets.js';
import { createNonce } from './create-nonce.js';
import { issueToken } from './issue-token.js';
import { verifySignIn } from './verify-sign-in.js';

const DevSignInBody = Type.Object(
  { address: Type.String({ pattern: '^0x[0-9a-fA-F]{40}$' }) },
  { additionalProperties: false },
);

export async function devSignInRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const accounts = (ctx.config.devWallets ?? []).map((key) => privateKeyToAccount(key as `0x${string}`));
  const noDevWallets = () =>
    new ApiError('not_found', 'This coordinator has no dev wallets (not a local devnet).');

  app.get(
    '/api/auth/dev-wallets',
    {
      schema: {
        summary: "The local devnet's dev wallets, to sign in without a browser wallet",
        tags: ['auth'],
      },
    },
    async () => {
      if (accounts.length === 0) throw noDevWallets();
      return { wallets: accounts.map((a) => ({ address: a.address })) };
    },
  );

  app.post<{ Body: Static<typeof DevSignInBody> }>(
    '/api/auth/dev-sign-in',
    {
      schema: {
        summary: 'Sign in as a dev wallet of the local devnet (its key signs here)',
        tags: ['auth'],
        body: DevSignInBody,
        response: { 200: Type.Object({ token: Type.String() }) },
      },
    },
    async (request) => {
      if (accounts.length === 0) throw noDevWallets();
      const address = getAddress(request.body.address);
      const account = accounts.find((a) => a.address === address);
      if (!account)
        throw new ApiError('invalid_request', `${address} is not a dev wallet.`, { param: 'address' });
      // The same two steps as a browser wallet's sign-in, the signature made with the dev key.
      const { message } = await createNonce(ctx.db, ctx.config, ctx.clock, address);
      const signature = await account.signMessage({ message });
      const verified = await verifySignIn(ctx.db, ctx.clock, ctx.chainClient, {
        address,
        message,
        signature,
      });
      const user = await findOrCreateUser(ctx.db, ctx.clock, verified);
      await ensureWallets(ctx.db, ctx.keyring, ctx.clock, user.id);
      return { token: (await issueToken(ctx.jwtKey, ctx.clock, ctx.config.jwtTtlS, user)).token };
    },
  );
}
