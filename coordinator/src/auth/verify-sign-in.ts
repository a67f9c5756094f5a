import type { Kysely } from 'kysely';
import { getAddress, isAddress, isHex, type PublicClient } from 'viem';
import type { Clock } from '../clock.js';
import type { Database } from '../db/schema.js';
import { ApiError } from '../errors.js';
import { consumeNonce } from './consume-nonce.js';
import { parseSignInNonce } from './sign-in-message.js';
import { verifyWalletSignature } from './verify-wallet-signature.js';

const refuse = (message: string) => new ApiError('invalid_credential', message);

/**
 * Checks a sign-in: the message must be one we issued (verbatim), to this address, unexpired and
 * unused; the signature must be the address's. The nonce is consumed first, success or not, so a
 * message can be tried once. Returns the checksummed address or throws 401 invalid_credential.
 */
export async function verifySignIn(
  db: Kysely<Database>,
  clock: Clock,
  chainClient: PublicClient | undefined,
  input: { address: string; message: string; signature: string },
): Promise<`0x${string}`> {
  if (!isAddress(input.address, { strict: false })) throw refuse('The address is malformed.');
  if (!isHex(input.signature, { strict: true }) || input.signature.length < 4) {
    throw refuse('The signature is malformed.');
  }
  const address = getAddress(input.address);
  const nonce = parseSignInNonce(input.message);
  if (!nonce) throw refuse('The message is not a sign-in message.');
  const issued = await consumeNonce(db, nonce);
  if (!issued) throw refuse('The nonce is unknown or was already used.');
  if (clock.now() > issued.expiresAtMs) throw refuse('The nonce has expired.');
  if (issued.address !== address) throw refuse('The nonce was issued to another address.');
  if (issued.message !== input.message) throw refuse('The message differs from the one issued.');
  const valid = await verifyWalletSignature(chainClient, {
    address,
    message: input.message,
    signature: input.signature,
  });
  if (!valid) throw refuse('The signature does not match the address.');
  return address;
}
