import type { Kysely } from 'kysely';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { Clock } from '../clock.js';
import type { Database } from '../db/schema.js';
import { generateNativeAccount } from './generate-native-account.js';
import { getWallets, type UserWallets } from './get-wallets.js';
import type { Keyring } from './keyring.js';

/** keyring contexts: a ciphertext only decrypts for the row and purpose it was made for. */
export const proxyKeyContext = (userId: string) => `wallet:proxy:${userId}`;
export const nativeKeyContext = (userId: string) => `wallet:native:${userId}`;

/**
 * Gives a user their proxy wallet and native account if they have none yet, and returns them.
 * Idempotent and race-safe: concurrent first sign-ins insert at most one row (the loser's freshly
 * generated keys are discarded before they were ever used).
 */
export async function ensureWallets(
  db: Kysely<Database>,
  keyring: Keyring,
  clock: Clock,
  userId: string,
): Promise<UserWallets> {
  const existing = await getWallets(db, userId);
  if (existing) return existing;
  const proxyKey = generatePrivateKey();
  const native = generateNativeAccount();
  await db
    .insertInto('wallets')
    .values({
      user_id: userId,
      proxy_address: privateKeyToAccount(proxyKey).address,
      proxy_key_enc: keyring.encrypt(proxyKey, proxyKeyContext(userId)),
      native_account: native.name,
      native_public_key: native.publicKey,
      native_key_enc: keyring.encrypt(native.privateKey, nativeKeyContext(userId)),
      created_at: clock.now(),
    })
    .onConflict((oc) => oc.column('user_id').doNothing())
    .execute();
  const stored = await getWallets(db, userId);
  if (!stored) throw new Error('wallet row missing after insert');
  return stored;
}
