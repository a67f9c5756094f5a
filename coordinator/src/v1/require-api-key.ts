import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { bearerToken } from '../auth/require-user.js';
import type { Database } from '../db/schema.js';
import { ApiError } from '../errors.js';
import type { AcceptedKey, AcceptedKeys } from '../keys/accepted-keys.js';
import { authenticateApiKey } from '../keys/authenticate-api-key.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the /v1 key check: the inference key and its owner. */
    apiKey?: AcceptedKey;
  }
}

/**
 * onRequest hook of /v1: admits only `Authorization: Bearer sk-…` keys that are active. A session
 * JWT is refused here (it opens /api, not inference).
 */
export function requireApiKey(db: Kysely<Database>, accepted: AcceptedKeys) {
  return async (request: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    const token = bearerToken(request);
    if (!token)
      throw new ApiError('invalid_credential', 'An API key is required: Authorization: Bearer sk-…');
    if (!token.startsWith('sk-')) {
      throw new ApiError(
        'invalid_credential',
        'Inference needs an API key (sk-…); session tokens are not accepted on /v1.',
      );
    }
    const key = await authenticateApiKey(db, token, { accepted });
    if (!key) throw new ApiError('invalid_credential', 'The API key is invalid or revoked.');
    request.apiKey = key;
  };
}
