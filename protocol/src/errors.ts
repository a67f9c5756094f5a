/**
 * The one registry of protocol error codes. Every code a peer can put in an `error` frame or imply
 * by a WebSocket close code is here; NODE_PROTOCOL.md lists exactly these (a test keeps them in sync).
 *
 * `closeCode` set: the error ends the session — the sender sends an `error` frame with this code
 * (when the socket is still writable) and then closes the WebSocket with `closeCode`.
 * `closeCode` null: the error is reported in an `error` frame and the session continues; most of
 * these concern one job (`jobId` set).
 */
export const PROTOCOL_ERRORS = {
  malformed_frame: {
    closeCode: 4000,
    retryable: false,
    message: 'The frame is not a UTF-8 text message holding one JSON object.',
  },
  unknown_type: { closeCode: 4001, retryable: false, message: 'The frame type is not known.' },
  schema_violation: {
    closeCode: 4002,
    retryable: false,
    message: 'The frame does not match the schema of its type.',
  },
  frame_too_large: {
    closeCode: 4003,
    retryable: false,
    message: 'The frame is larger than the negotiated maxFrameBytes.',
  },
  unsupported_version: {
    closeCode: 4004,
    retryable: false,
    message: 'No protocol version is supported by both peers.',
  },
  out_of_order: {
    closeCode: 4005,
    retryable: false,
    message: 'The frame is not allowed at this point of the session.',
  },
  auth_failed: {
    closeCode: 4006,
    retryable: false,
    message: 'The challenge signature, the owner proof or the challenge itself is not valid.',
  },
  manifest_signature_invalid: {
    closeCode: 4007,
    retryable: false,
    message: 'The manifest signature does not recover to the node id.',
  },
  manifest_rejected: {
    closeCode: 4008,
    retryable: false,
    message: 'The manifest does not describe this session (node id, role or protocol version differ).',
  },
  heartbeat_timeout: {
    closeCode: 4009,
    retryable: true,
    message: 'Nothing was received from the peer for longer than the session TTL.',
  },
  handshake_timeout: {
    closeCode: 4010,
    retryable: true,
    message: 'The handshake (hello, auth, manifest) did not complete in time.',
  },
  session_replaced: {
    closeCode: 4011,
    retryable: false,
    message: 'The same node id opened a newer session; this one is closed.',
  },
  node_suspended: {
    closeCode: 4012,
    retryable: false,
    message: 'The node is suspended by the coordinator.',
  },
  presence_invalid: {
    closeCode: null,
    retryable: false,
    message: 'The presence change is not allowed from the current state.',
  },
  unknown_job: { closeCode: null, retryable: false, message: 'No job with this id is in flight.' },
  duplicate_job: { closeCode: null, retryable: false, message: 'A job with this id is already in flight.' },
  invalid_request: {
    closeCode: null,
    retryable: false,
    message: 'The job request is not a valid OpenAI request for its kind.',
  },
  context_length_exceeded: {
    closeCode: null,
    retryable: false,
    message: "The prompt (or an input) does not fit the model's context.",
  },
  model_not_found: { closeCode: null, retryable: true, message: 'The node does not serve this model.' },
  overloaded: { closeCode: null, retryable: true, message: 'The node is at capacity.' },
  draining: { closeCode: null, retryable: true, message: 'The node is draining and takes no new jobs.' },
  job_cancelled: { closeCode: null, retryable: false, message: 'The job was cancelled.' },
  job_timeout: { closeCode: null, retryable: true, message: 'The job did not finish within timeoutMs.' },
  runtime_error: { closeCode: null, retryable: true, message: 'The inference runtime failed.' },
  internal_error: { closeCode: null, retryable: true, message: 'An unexpected error happened in the peer.' },
} as const satisfies Record<string, { closeCode: number | null; retryable: boolean; message: string }>;

/** A code from {@link PROTOCOL_ERRORS}. */
export type ProtocolErrorCode = keyof typeof PROTOCOL_ERRORS;

/** Every registered error code. */
export const PROTOCOL_ERROR_CODES = Object.keys(PROTOCOL_ERRORS) as ProtocolErrorCode[];

/** True when `code` is a registered protocol error code. */
export function isProtocolErrorCode(code: string): code is ProtocolErrorCode {
  return Object.hasOwn(PROTOCOL_ERRORS, code);
}

/** The registry code for a WebSocket close code in the 4000 range, if any. */
export function errorCodeForClose(closeCode: number): ProtocolErrorCode | undefined {
  return PROTOCOL_ERROR_CODES.find((code) => PROTOCOL_ERRORS[code].closeCode === closeCode);
}

/**
 * A protocol failure with its registry code. `closeCode` is the WebSocket close code the receiver
 * must use (null: report in an `error` frame, keep the session).
 */
export class ProtocolError extends Error {
  override readonly name = 'ProtocolError';
  readonly code: ProtocolErrorCode;
  readonly closeCode: number | null;
  readonly retryable: boolean;

  constructor(code: ProtocolErrorCode, detail?: string, options?: { cause?: unknown }) {
    const entry = PROTOCOL_ERRORS[code];
    super(detail ? `${entry.message} ${detail}` : entry.message, options);
    this.code = code;
    this.closeCode = entry.closeCode;
    this.retryable = entry.retryable;
  }
}
