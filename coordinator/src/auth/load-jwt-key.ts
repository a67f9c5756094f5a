import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import type { Database } from '../db/schema.js';
import type { Keyring } from '../wallets/keyring.js';

export const JWT_KEY_NAME = 'jwt-hs256';
const JWT_KEY_BYTES = 32;

/**
 * A random secret created on first start and kept in the database (app_secrets), encrypted under
 * the master key, so every replica sharing the database uses the same one. Race-safe: concurrent
 * first starts insert once and all read the winner's secret.
 */
export async function loadAppSecret(
  db: Kysely<Database>,
  keyring: Keyring,
  clock: Clock,
  name: string,
  bytes: number,
): Promise<Buffer> {
  const context = `app-secret:${name}`;
  await db
    .insertInto('app_secrets')
    .values({
      name,
      value: keyring.encrypt(randomBytes(bytes).toString('hex'), context),
      created_at: clock.now(),
    })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const row = await db
    .selectFrom('app_secrets')
    .select('value')
    .where('name', '=', name)
    .executeTakeFirstOrThrow();
  return Buffer.from(keyring.decrypt(row.value, context), 'hex');
}

/** The JWT signing key (HS256): every replica sharing the database verifies every replica's tokens. */
export async function loadJwtKey(db: Kysely<Database>, keyring: Keyring, clock: Clock): Promise<Uint8Array> {
  return loadAppSecret(db, keyring, clock, JWT_KEY_NAME, JWT_KEY_BYTES);
}
