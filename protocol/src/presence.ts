import { ProtocolError } from './errors.js';

/** Where a node is in its life, as the coordinator tracks it. */
export const PRESENCE_STATES = ['connecting', 'online', 'busy', 'draining', 'offline', 'suspended'] as const;
export type PresenceState = (typeof PRESENCE_STATES)[number];

/**
 * What moves a node between states:
 * - `connect`: a WebSocket opened;
 * - `available` / `full`: after its manifest is accepted, the node reported online (free capacity) /
 *   busy (in-flight = capacity);
 * - `drain`: the coordinator sent drain or the node reported draining;
 * - `disconnect`: bye, a close, presence offline or heartbeat expiry (TTL);
 * - `suspend` / `reinstate`: an operator decision.
 */
export const PRESENCE_EVENTS = [
  'connect',
  'full',
  'available',
  'drain',
  'disconnect',
  'suspend',
  'reinstate',
] as const;
export type PresenceEvent = (typeof PRESENCE_EVENTS)[number];

/** Every allowed move; anything missing is rejected. */
export const PRESENCE_TRANSITIONS: Readonly<
  Record<PresenceState, Readonly<Partial<Record<PresenceEvent, PresenceState>>>>
> = Object.freeze({
  connecting: { available: 'online', full: 'busy', disconnect: 'offline', suspend: 'suspended' },
  online: {
    full: 'busy',
    available: 'online',
    drain: 'draining',
    disconnect: 'offline',
    suspend: 'suspended',
  },
  busy: { available: 'online', full: 'busy', drain: 'draining', disconnect: 'offline', suspend: 'suspended' },
  draining: { drain: 'draining', disconnect: 'offline', suspend: 'suspended' },
  offline: { connect: 'connecting', suspend: 'suspended' },
  suspended: { reinstate: 'offline' },
});

/**
 * The state after `event` in `state`.
 * @throws ProtocolError `presence_invalid` when the move is not allowed.
 */
export function nextPresence(state: PresenceState, event: PresenceEvent): PresenceState {
  const next = PRESENCE_TRANSITIONS[state][event];
  if (!next) throw new ProtocolError('presence_invalid', `${event} is not allowed in ${state}.`);
  return next;
}

/** The presence event a node's `presence` frame status stands for. */
export const PRESENCE_EVENT_FOR_STATUS = {
  online: 'available',
  busy: 'full',
  draining: 'drain',
  offline: 'disconnect',
} as const satisfies Record<string, PresenceEvent>;
