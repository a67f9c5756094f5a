import { PROTOCOL_VERSION } from './constants.js';
import type { FrameOf, FrameType } from './messages.js';

/** Builds a frame of `type` with the current protocol version: `createFrame('ping', { ts: 1 })`. */
export function createFrame<T extends FrameType>(
  type: T,
  fields: Omit<FrameOf<T>, 'v' | 'type'>,
): FrameOf<T> {
  return { v: PROTOCOL_VERSION, type, ...fields } as FrameOf<T>;
}
