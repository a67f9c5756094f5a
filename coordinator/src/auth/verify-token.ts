import { jwtVerify } from 'jose';
import type { Clock } from '../clock.js';
import { JWT_ALG } from './issue-token.js';

export type TokenClaims = { sub: string; addr: `0x${string}`; iat: number; exp: number; jti: string };

/**
 * Checks a session JWT's signature (HS256 only, so `alg: none` and algorithm swaps fail), its
 * expiry against the injected clock, and its claim shapes. Returns the claims or null; never
 * throws (jose's errors stay here). Revocation is checked separately (isTokenRevoked).
 */
export async function verifyToken(key: Uint8Array, clock: Clock, token: string): Promise<TokenClaims | null> {
  try {
    const { payload } = await jwtVerify(token, key, {
      algorithms: [JWT_ALG],
      currentDate: new Date(clock.now()),
      requiredClaims: ['sub', 'iat', 'exp', 'jti'],
      clockTolerance: 0,
    });
    const { sub, addr, iat, exp, jti } = payload;
    if (
      typeof sub !== 'string' ||
      typeof jti !== 'string' ||
      typeof iat !== 'number' ||
      typeof exp !== 'number'
    ) {
      return null;
    }
    if (typeof addr !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(addr)) return null;
    return { sub, addr: addr as `0x${string}`, iat, exp, jti };
  } catch {
    return null;
  }
}
