import type { FrameType } from './messages.js';

/**
 * Phases of a session, the same on both sides:
 * `hello` (socket open, no hello yet) → `auth` (challenge sent) → `manifest` (welcome sent) →
 * `ready` (manifest acknowledged). A session leaves `ready` only by closing.
 */
export const SESSION_PHASES = ['hello', 'auth', 'manifest', 'ready'] as const;
export type SessionPhase = (typeof SESSION_PHASES)[number];

/** Which side receives: the coordinator receives node frames, the node receives coordinator frames. */
export type Receiver = 'coordinator' | 'node';

const ALWAYS: readonly FrameType[] = ['error', 'bye'];

/** The frame types each receiver accepts in each phase; anything else is `out_of_order`. */
export const SESSION_ORDER: Readonly<Record<Receiver, Readonly<Record<SessionPhase, readonly FrameType[]>>>> =
  {
    coordinator: {
      hello: ['hello'],
      auth: ['auth'],
      manifest: ['manifest', 'ping', 'pong'],
      ready: ['manifest', 'presence', 'ping', 'pong', 'chunk', 'result'],
    },
    node: {
      hello: ['challenge'],
      auth: ['welcome'],
      manifest: ['manifest_ack', 'ping', 'pong'],
      ready: ['manifest_ack', 'ping', 'pong', 'job', 'cancel', 'drain'],
    },
  };

/** True when `receiver` may accept a frame of `type` in `phase` (`error` and `bye` always). */
export function frameAllowed(receiver: Receiver, phase: SessionPhase, type: FrameType): boolean {
  return ALWAYS.includes(type) || SESSION_ORDER[receiver][phase].includes(type);
}
