import { describe, expect, test } from 'vitest';
import { ProtocolError } from './errors.js';
import { nextPresence, PRESENCE_EVENTS, PRESENCE_STATES, PRESENCE_TRANSITIONS } from './presence.js';

describe('nextPresence', () => {
  test('default', () => {
    let state = nextPresence('offline', 'connect');
    state = nextPresence(state, 'available');
    expect(state).toBe('online');
    state = nextPresence(state, 'full');
    expect(state).toBe('busy');
    state = nextPresence(state, 'drain');
    expect(nextPresence(state, 'disconnect')).toBe('offline');
  });

  test('behavior: every state can be left, and only by the table', () => {
    for (const state of PRESENCE_STATES) {
      for (const event of PRESENCE_EVENTS) {
        const expected = PRESENCE_TRANSITIONS[state][event];
        if (expected) expect(nextPresence(state, event)).toBe(expected);
        else expect(() => nextPresence(state, event)).toThrow(ProtocolError);
      }
    }
  });

  test('error: a draining node cannot come back online', () => {
    expect(() => nextPresence('draining', 'available')).toThrow(/not allowed/);
    expect(() => nextPresence('suspended', 'connect')).toThrow(ProtocolError);
  });
});
