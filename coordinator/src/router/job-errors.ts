/**
 * A node's job error, read two ways: whether another node may succeed (failover), and the API
 * error the client sees.
 */
import { isProtocolErrorCode, type JobKind, PROTOCOL_ERRORS } from '@gpumesh/protocol';
import { ApiError } from '../errors.js';
import type { JobError } from './jobs.js';

/**
 * Whether another node may well succeed after this job error: the protocol registry's `retryable`
 * for its code (never the node's own flag: a node cannot turn its refusal into a retry elsewhere),
 * unknown codes as internal_error, and `node_lost` (the coordinator's own: the session ended).
 */
export function failsOver(error: JobError): boolean {
  if (error.code === 'node_lost') return true;
  return PROTOCOL_ERRORS[isProtocolErrorCode(error.code) ? error.code : 'internal_error'].retryable;
}

/** A node's job error as the API error the client sees. */
export function mapJobError(error: JobError, kind: JobKind = 'chat'): ApiError {
  if (error.code === 'job_timeout') return new ApiError('provider_timeout');
  if (error.code === 'context_length_exceeded') {
    const param = kind === 'embedding' ? 'input' : kind === 'completion' ? 'prompt' : 'messages';
    return new ApiError(
      'context_length_exceeded',
      `The model's context is too short: ${error.message.slice(0, 200)}`,
      {
        param,
      },
    );
  }
  // Every candidate was busy or leaving: the network is at capacity now, not broken.
  if (error.code === 'overloaded' || error.code === 'draining') {
    return new ApiError(
      'no_provider_available',
      'Every provider of this model is at capacity; retry shortly.',
      {
        retryAfterS: 1,
      },
    );
  }
  if (error.code === 'invalid_request') {
    return new ApiError(
      'invalid_request',
      `The provider refused the request: ${error.message.slice(0, 200)}`,
    );
  }
  return new ApiError('provider_error', `The provider failed (${error.code}).`);
}
