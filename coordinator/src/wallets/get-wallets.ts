import type { Kysely } from 'kysely';
import type { Address } from 'viem';
import type { Database } from '../db/schema.js';

/** A user's public wallet identifiers (never their keys). */
export type UserWallets = { proxyAddress: Address; nativeAccount: string; publicKey: string };

/** Reads a user's wallets, or null before their first sign-in created them. */
export async function getWallets(db: Kysely<Database>, userId: string): Promise<UserWallets | null> {
  const row = await db
    .selectFrom('wallets')
    .select(['proxy_address', 'native_account', 'native_public_key'])
    .where('user_id', '=', userId)
    .executeTakeFirst();
  if (!row) return null;
  return {
    proxyAddress: row.proxy_address as Address,
    nativeAccount: row.native_account,
    publicKey: row.native_public_key,
  };
}
