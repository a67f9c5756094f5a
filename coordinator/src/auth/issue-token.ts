import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import type { Clock } from '../clock.js';

export const JWT_ALG = 'HS256';

/** Signs a session JWT with claims sub (user id), addr, iat, exp, jti. */
export async function issueToken(
  key: Uint8Array,
  clock: Clock,
  ttlS: number,
  user: { id: string; address: string },
): Promise<{ token: string; jti: string; expiresAtS: number }> {
  const iat = Math.floor(clock.now() / 1000);
  const jti = randomUUID();
  const expiresAtS = iat + ttlS;
  const token = await new SignJWT({ addr: user.address })
    .setProtectedHeader({ alg: JWT_ALG, typ: 'JWT' })
    .setSubject(user.id)
    .setIssuedAt(iat)
    .setExpirationTime(expiresAtS)
    .setJti(jti)
    .sign(key);
  return { token, jti, expiresAtS };
}
