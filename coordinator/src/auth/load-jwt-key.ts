import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import type { Database } from '../db/schema.js';
import type { Keyring } from '../wallets/keyring.js';

export const JWT_KEY_NAME = 'jwt-hs256';
const JWT_KEY_BYTES = 32;

/**
 * The JWT signing key (HS256): created on first start and kept in the database, encrypted under
 * the master key, so every replica sharing the database verifies every replica's tokens.
 * Race-safe: concurrent first starts insert once and all read the winner's key.
 */
export async function loadJwtKey(db: Kysely<Database>, keyring: Keyring, clock: Clock): Promise<Uint8Array> {
  const context = `app-secret:${JWT_KEY_NAME}`;
  await db
    .insertInto('app_secrets')
    .values({
      name: JWT_KEY_NAME,
      value: keyring.encrypt(randomBytes(JWT_KEY_BYTES).toString('hex'), context),
      created_at: clock.now(),
    })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const row = await db
    .selectFrom('app_secrets')
    .select('value')
    .where('name', '=', JWT_KEY_NAME)
    .executeTakeFirstOrThrow();
  return Buffer.from(keyring.decrypt(row.value, context), 'hex');
}
