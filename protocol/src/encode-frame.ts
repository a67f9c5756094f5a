import { ProtocolError } from './errors.js';
import { firstViolation, frameChecker } from './frame-checker.js';
import type { Frame } from './messages.js';

/**
 * Serialises a frame to the JSON text sent as one WebSocket text message. The frame is validated
 * first, so a bug on our side never reaches a peer.
 * @throws ProtocolError `schema_violation` when the frame does not match its schema.
 */
export function encodeFrame(frame: Frame): string {
  const type = frame.type;
  if (!frameChecker(type).Check(frame)) {
    throw new ProtocolError('schema_violation', `${type} ${firstViolation(type, frame)}`);
  }
  return JSON.stringify(frame);
}
