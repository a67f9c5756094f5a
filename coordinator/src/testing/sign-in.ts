import type { FastifyInstance } from 'fastify';
import type { LocalAccount } from 'viem';

/**
 * Signs `account` in through the real routes (nonce → sign → verify) and returns the JWT.
 * Throws with the response body when any step fails.
 */
export async function signIn(app: FastifyInstance, account: LocalAccount): Promise<string> {
  const nonce = await app.inject({ method: 'GET', url: `/api/auth/nonce?address=${account.address}` });
  if (nonce.statusCode !== 200) throw new Error(`nonce failed: ${nonce.statusCode} ${nonce.body}`);
  const { message } = nonce.json() as { message: string };
  const signature = await account.signMessage({ message });
  const verify = await app.inject({
    method: 'POST',
    url: '/api/auth/verify',
    payload: { address: account.address, message, signature },
  });
  if (verify.statusCode !== 200) throw new Error(`verify failed: ${verify.statusCode} ${verify.body}`);
  return (verify.json() as { token: string }).token;
}
