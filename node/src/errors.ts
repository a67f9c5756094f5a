import type { ProtocolErrorCode } from '@gpumesh/protocol';

/**
 * The one registry of the node daemon's error codes. `wire` is the protocol error code a job
 * failure is reported with in an `error` frame (null: the error never concerns a job). node/README.md
 * lists exactly these codes; a test keeps the two in sync.
 */
export const NODE_ERRORS = {
  config_invalid: { wire: null, retryable: false, message: 'The configuration is not valid.' },
  hardware_detection_failed: { wire: null, retryable: true, message: 'Hardware detection failed.' },
  identity_invalid: { wire: null, retryable: false, message: 'The node key file is not valid.' },
  model_load_failed: { wire: 'runtime_error', retryable: false, message: 'The model could not be loaded.' },
  model_not_found: {
    wire: 'model_not_found',
    retryable: true,
    message: 'This node does not serve the model.',
  },
  invalid_request: { wire: 'invalid_request', retryable: false, message: 'The request is not valid.' },
  context_length_exceeded: {
    wire: 'context_length_exceeded',
    retryable: false,
    message: "The prompt does not fit the model's context.",
  },
  job_cancelled: { wire: 'job_cancelled', retryable: false, message: 'The job was cancelled.' },
  runtime_unreachable: {
    wire: 'runtime_error',
    retryable: true,
    message: 'The local inference server could not be reached.',
  },
  runtime_error: { wire: 'runtime_error', retryable: true, message: 'The inference runtime failed.' },
  model_download_failed: { wire: null, retryable: true, message: 'The model could not be downloaded.' },
  model_checksum_mismatch: {
    wire: null,
    retryable: false,
    message: "The downloaded file's SHA-256 is not the expected one; it was removed.",
  },
} as const satisfies Record<string, { wire: ProtocolErrorCode | null; retryable: boolean; message: string }>;

export type NodeErrorCode = keyof typeof NODE_ERRORS;

/**
 * A node daemon failure with its registry code. Foreign errors (node-llama-cpp, fetch, fs) are
 * wrapped into one of these at the module boundary; their text stays in `cause`, for local logs only.
 */
export class NodeError extends Error {
  override readonly name = 'NodeError';
  readonly code: NodeErrorCode;
  readonly retryable: boolean;

  constructor(code: NodeErrorCode, options?: { detail?: string; cause?: unknown }) {
    const entry = NODE_ERRORS[code];
    super(options?.detail ? `${entry.message} ${options.detail}` : entry.message, { cause: options?.cause });
    this.code = code;
    this.retryable = entry.retryable;
  }
}

/** `error` as a NodeError: itself when it is one, else wrapped under `fallback`. */
export function toNodeError(error: unknown, fallback: NodeErrorCode): NodeError {
  return error instanceof NodeError ? error : new NodeError(fallback, { cause: error });
}
