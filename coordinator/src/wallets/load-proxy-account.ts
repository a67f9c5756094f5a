import type { Kysely } from 'kysely';
import type { Hex, PrivateKeyAccount } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { Database } from '../db/schema.js';
import { ApiError } from '../errors.js';
import { proxyKeyContext } from './ensure-wallets.js';
import type { Keyring } from './keyring.js';

/**
 * The user's proxy wallet as a viem LocalAccount, able to sign. For chain/ only: it is the one
 * place that builds and signs transactions. Throws ApiError('not_found') when the user has none.
 */
export async function loadProxyAccount(
  db: Kysely<Database>,
  keyring: Keyring,
  userId: string,
): Promise<PrivateKeyAccount> {
  const row = await db
    .selectFrom('wallets')
    .select(['proxy_key_enc', 'proxy_address'])
    .where('user_id', '=', userId)
    .executeTakeFirst();
  if (!row) throw new ApiError('not_found', 'This user has no proxy wallet yet.');
  const account = privateKeyToAccount(keyring.decrypt(row.proxy_key_enc, proxyKeyContext(userId)) as Hex);
  if (account.address !== row.proxy_address) throw new ApiError('internal_error');
  return account;
}
