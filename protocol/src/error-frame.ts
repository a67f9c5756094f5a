import { createFrame } from './create-frame.js';
import { PROTOCOL_ERRORS, type ProtocolError, type ProtocolErrorCode } from './errors.js';
import type { ErrorFrame, Usage } from './messages.js';

/** The longest `message` an error frame carries (its schema's limit). */
export const MAX_ERROR_MESSAGE_CHARS = 1024;

export type ErrorFrameOptions = {
  /** The job the error ends; absent for an error about the session. */
  jobId?: string;
  /** Default: the error's own message, or the registry's for a bare code. */
  message?: string;
  /** What the job used before it ended (node → coordinator, NODE_PROTOCOL.md §9). */
  usage?: Usage;
};

/**
 * The `error` frame for a registry code or a ProtocolError: `retryable` is always the registry's,
 * the message is cut to what the schema allows. `errorFrame(error)` reports a session failure
 * before the close; `errorFrame('overloaded', { jobId })` ends one job.
 */
export function errorFrame(
  error: ProtocolErrorCode | ProtocolError,
  options: ErrorFrameOptions = {},
): ErrorFrame {
  const code = typeof error === 'string' ? error : error.code;
  const message =
    options.message ?? (typeof error === 'string' ? PROTOCOL_ERRORS[code].message : error.message);
  return createFrame('error', {
    ...(options.jobId === undefined ? {} : { jobId: options.jobId }),
    code,
    message: message.slice(0, MAX_ERROR_MESSAGE_CHARS),
    retryable: PROTOCOL_ERRORS[code].retryable,
    ...(options.usage === undefined ? {} : { usage: options.usage }),
  });
}
