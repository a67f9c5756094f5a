import { hash, randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** Random base62 characters after `sk-`: 40 × log2(62) ≈ 238 bits. */
export const API_KEY_RANDOM_CHARS = 40;
/** Characters of the secret kept in clear for lists: `sk-` + 6. */
export const API_KEY_PREFIX_LENGTH = 9;
export const API_KEY_PATTERN = /^sk-[0-9A-Za-z]{32,128}$/;

/** A fresh secret `sk-…`, its list prefix, and the sha256 hash that is all the store keeps. */
export function generateApiKey(): { secret: string; prefix: string; hash: string } {
  let body = '';
  while (body.length < API_KEY_RANDOM_CHARS) {
    for (const byte of randomBytes(64)) {
      // 248 = 4 × 62: rejecting bytes above it keeps every character equally likely.
      if (byte < 248 && body.length < API_KEY_RANDOM_CHARS) body += BASE62[byte % 62];
    }
  }
  const secret = `sk-${body}`;
  return { secret, prefix: secret.slice(0, API_KEY_PREFIX_LENGTH), hash: hashApiKey(secret) };
}

/**
 * sha256 hex of a secret. A fast hash is right here: secrets carry ~238 random bits, so there is
 * nothing to brute-force, and lookups by hash stay one index probe.
 */
export function hashApiKey(secret: string): string {
  return hash('sha256', secret, 'hex');
}
