import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { Database } from '../db/schema.js';
import { credit } from '../ledger/credit.js';
import { signIn } from './sign-in.js';

/** A new user signed in through the real routes, an `sk-` key of theirs, and `amountNano` credited. */
export async function fundedApiKey(
  app: FastifyInstance,
  db: Kysely<Database>,
  ref: string,
  amountNano: bigint,
): Promise<string> {
  const auth = { authorization: `Bearer ${await signIn(app, privateKeyToAccount(generatePrivateKey()))}` };
  const user = (await app.inject({ method: 'GET', url: '/api/user', headers: auth })).json() as {
    id: string;
  };
  const created = await app.inject({
    method: 'POST',
    url: '/api/router/keys',
    headers: auth,
    payload: { name: 'k' },
  });
  await credit(db, { userId: user.id, amountNano, ref });
  return (created.json() as { key: string }).key;
}
