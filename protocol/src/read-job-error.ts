import { isProtocolErrorCode, PROTOCOL_ERRORS, type ProtocolErrorCode } from './errors.js';
import type { ErrorFrame, Usage } from './messages.js';

/** How a job ended in error, typed: the registry code and its `retryable`, never a bare string. */
export type JobError = {
  readonly jobId: string;
  readonly code: ProtocolErrorCode;
  /** The registry's: a peer cannot make its own refusal retryable elsewhere, nor the reverse. */
  readonly retryable: boolean;
  readonly message: string;
  /** What the job used before it ended, when the node says. */
  readonly usage?: Usage;
};

/**
 * Decodes an `error` frame about a job (one with `jobId`) into a typed JobError; an unknown code
 * reads as `internal_error` (NODE_PROTOCOL.md §10). Undefined for an error about the session.
 */
export function readJobError(frame: ErrorFrame): JobError | undefined {
  if (frame.jobId === undefined) return undefined;
  const code = isProtocolErrorCode(frame.code) ? frame.code : 'internal_error';
  return {
    jobId: frame.jobId,
    code,
    retryable: PROTOCOL_ERRORS[code].retryable,
    message: frame.message,
    ...(frame.usage === undefined ? {} : { usage: frame.usage }),
  };
}
