import type { FastifyInstance } from 'fastify';
import { generatePrivateKey, type LocalAccount, privateKeyToAccount } from 'viem/accounts';
import { credit } from '../../coordinator/src/ledger/credit.js';
import { signIn } from '../../coordinator/src/testing/sign-in.js';

/** A user of a coordinator: its session token, id and one API key. */
export type ApiClient = { jwt: string; userId: string; key: string; keyId: string };

/**
 * A new user of `app`: signed in with `account` (default a fresh wallet), with an API key named
 * `keyName`, and credited `creditNano` (ledger ref `creditRef`) when given.
 */
export async function newApiClient(
  app: FastifyInstance,
  options: { keyName: string; creditNano?: bigint; creditRef?: string; account?: LocalAccount },
): Promise<ApiClient> {
  const jwt = await signIn(app, options.account ?? privateKeyToAccount(generatePrivateKey()));
  const auth = { authorization: `Bearer ${jwt}` };
  const { id: userId } = (await app.inject({ method: 'GET', url: '/api/user', headers: auth })).json() as {
    id: string;
  };
  const created = await app.inject({
    method: 'POST',
    url: '/api/router/keys',
    headers: auth,
    payload: { name: options.keyName },
  });
  const { key, id: keyId } = created.json() as { key: string; id: string };
  if (options.creditNano !== undefined) {
    await credit(app.ctx.db, {
      userId,
      amountNano: options.creditNano,
      ref: options.creditRef ?? `seed-${userId}`,
    });
  }
  return { jwt, userId, key, keyId };
}
