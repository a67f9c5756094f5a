import { describe, expect, test } from 'vitest';
import { COORDINATOR_FRAME_TYPES, NODE_FRAME_TYPES } from './messages.js';
import { frameAllowed, SESSION_ORDER, SESSION_PHASES } from './session-order.js';

describe('frameAllowed', () => {
  test('default', () => {
    expect(frameAllowed('coordinator', 'hello', 'hello')).toBe(true);
    expect(frameAllowed('coordinator', 'hello', 'manifest')).toBe(false);
    expect(frameAllowed('node', 'ready', 'job')).toBe(true);
    expect(frameAllowed('node', 'manifest', 'job')).toBe(false);
    expect(frameAllowed('node', 'hello', 'bye')).toBe(true);
  });

  test('behavior: a receiver only accepts what the other side may send', () => {
    for (const phase of SESSION_PHASES) {
      for (const type of SESSION_ORDER.coordinator[phase]) expect(NODE_FRAME_TYPES).toContain(type);
      for (const type of SESSION_ORDER.node[phase]) expect(COORDINATOR_FRAME_TYPES).toContain(type);
    }
  });
});
