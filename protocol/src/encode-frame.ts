import { ProtocolError } from './errors.js';
import { frameViolation } from './frame-checker.js';
import type { Frame } from './messages.js';

/**
 * Serialises a frame to the JSON text sent as one WebSocket text message. The frame is validated
 * first, so a bug on our side never reaches a peer.
 * @throws ProtocolError `schema_violation` when the frame does not match its schema or its rules.
 */
export function encodeFrame(frame: Frame): string {
  const violation = frameViolation(frame.type, frame);
  if (violation !== undefined) throw new ProtocolError('schema_violation', violation);
  return JSON.stringify(frame);
}
