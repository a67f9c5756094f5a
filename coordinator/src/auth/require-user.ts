import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import type { Database } from '../db/schema.js';
import { ApiError } from '../errors.js';
import { isTokenRevoked } from './is-token-revoked.js';
import { verifyToken } from './verify-token.js';

/** The signed-in user a request acts for. `address` is checksummed. */
export type AuthUser = { id: string; address: `0x${string}`; jti: string; exp: number };

export type RequireUser = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by app.requireUser; null on routes that do not require a user. */
    user: AuthUser | null;
  }
  interface FastifyInstance {
    /**
     * Hook that admits only requests with a valid, unrevoked session JWT (`Authorization: Bearer`)
     * and sets request.user; anything else is 401 invalid_credential. Use it as `onRequest`
     * (before the body is read) or `preHandler`.
     */
    requireUser: RequireUser;
  }
}

/** The bearer token of a request, or null. */
export function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return null;
  const match = /^Bearer ([\x21-\x7e]{1,4096})$/i.exec(header.trim());
  return match?.[1] ?? null;
}

/** Builds app.requireUser over the JWT key, the clock and the revocation list. */
export function createRequireUser(db: Kysely<Database>, key: Uint8Array, clock: Clock): RequireUser {
  return async (request) => {
    const token = bearerToken(request);
    if (!token) throw new ApiError('invalid_credential', 'A Bearer session token is required.');
    const claims = await verifyToken(key, clock, token);
    if (!claims) throw new ApiError('invalid_credential', 'The session token is invalid or expired.');
    if (await isTokenRevoked(db, claims.jti)) {
      throw new ApiError('invalid_credential', 'The session token was logged out.');
    }
    request.user = { id: claims.sub, address: claims.addr, jti: claims.jti, exp: claims.exp };
  };
}
