import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import type { CoordinatorConfig } from '../config.js';
import type { Database } from '../db/schema.js';
import { buildSignInMessage } from './sign-in-message.js';

/** 24 random bytes → 48 hex chars: 192 bits, above design.md's ≥128. */
export const NONCE_BYTES = 24;

/**
 * Issues a single-use sign-in nonce bound to `address` (checksummed) and returns the message to
 * sign. Expired nonces are swept on the way, so the table stays small without a timer.
 */
export async function createNonce(
  db: Kysely<Database>,
  config: Pick<CoordinatorConfig, 'publicUrl' | 'nonceTtlMs' | 'chain'>,
  clock: Clock,
  address: string,
): Promise<{ message: string; nonce: string; expiresAtMs: number }> {
  const now = clock.now();
  const nonce = randomBytes(NONCE_BYTES).toString('hex');
  const expiresAtMs = now + config.nonceTtlMs;
  const message = buildSignInMessage({
    domain: new URL(config.publicUrl).host,
    address,
    uri: config.publicUrl,
    chainId: config.chain.chainId,
    nonce,
    issuedAtMs: now,
    expiresAtMs,
  });
  await db.deleteFrom('auth_nonces').where('expires_at', '<', now).execute();
  await db
    .insertInto('auth_nonces')
    .values({ nonce, address, message, expires_at: expiresAtMs, created_at: now })
    .execute();
  return { message, nonce, expiresAtMs };
}
