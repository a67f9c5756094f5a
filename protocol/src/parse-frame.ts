import { DEFAULT_MAX_FRAME_BYTES, PROTOCOL_VERSION } from './constants.js';
import { ProtocolError } from './errors.js';
import { frameViolation } from './frame-checker.js';
import { FRAME_SCHEMAS, type Frame, type FrameType } from './messages.js';

export type ParseFrameOptions = {
  /** Largest accepted message in bytes (the session's maxFrameBytes). */
  maxBytes?: number;
  /** True when the WebSocket message was binary; binary messages are malformed. */
  binary?: boolean;
};

/** What a WebSocket library may hand over for one message. */
export type RawFrame = string | Uint8Array | ArrayBuffer | readonly Uint8Array[];

const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * Parses and validates one inbound WebSocket message. Every receiver applies it to every frame.
 *
 * Checks, in order: size (`frame_too_large`), binary or invalid UTF-8 or not one JSON object
 * (`malformed_frame`), `type` (`unknown_type`), `v` (`unsupported_version`), the schema of the type
 * and the rules across its fields (`schema_violation`).
 * @throws ProtocolError with the registry code and the WebSocket close code to use.
 */
export function parseFrame(data: RawFrame, options: ParseFrameOptions = {}): Frame {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_FRAME_BYTES;
  const size = byteLength(data);
  if (size > maxBytes) throw new ProtocolError('frame_too_large', `${size} > ${maxBytes} bytes.`);
  if (options.binary) throw new ProtocolError('malformed_frame', 'Binary messages are not frames.');

  let value: unknown;
  try {
    value = JSON.parse(toText(data));
  } catch (cause) {
    throw new ProtocolError('malformed_frame', 'Not UTF-8 JSON.', { cause });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ProtocolError('malformed_frame', 'Not a JSON object.');
  }

  const record = value as Record<string, unknown>;
  const type = record.type;
  if (typeof type !== 'string' || !Object.hasOwn(FRAME_SCHEMAS, type)) {
    throw new ProtocolError(
      'unknown_type',
      typeof type === 'string' ? `"${type.slice(0, 64)}".` : 'No type.',
    );
  }
  const frameType = type as FrameType;
  if (record.v !== PROTOCOL_VERSION) {
    if (Number.isInteger(record.v) && (record.v as number) >= 0) {
      throw new ProtocolError('unsupported_version', `Frame version ${record.v}.`);
    }
    throw new ProtocolError('schema_violation', '/v: must be a protocol version.');
  }
  const violation = frameViolation(frameType, value);
  if (violation !== undefined) throw new ProtocolError('schema_violation', violation);
  return value as Frame;
}

function byteLength(data: RawFrame): number {
  if (typeof data === 'string') return Buffer.byteLength(data, 'utf8');
  if (data instanceof ArrayBuffer) return data.byteLength;
  if (data instanceof Uint8Array) return data.byteLength;
  return data.reduce((sum, part) => sum + part.byteLength, 0);
}

function toText(data: RawFrame): string {
  if (typeof data === 'string') return data;
  if (data instanceof ArrayBuffer) return decoder.decode(new Uint8Array(data));
  if (data instanceof Uint8Array) return decoder.decode(data);
  return decoder.decode(Buffer.concat(data));
}
