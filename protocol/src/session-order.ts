import { ProtocolError } from './errors.js';
import type { FrameType } from './messages.js';

/**
 * Phases of a session, the same on both sides:
 * `hello` (socket open, no hello yet) → `auth` (challenge sent) → `manifest` (welcome sent) →
 * `ready` (manifest acknowledged). A session leaves `ready` only by closing.
 */
export const SESSION_PHASES = ['hello', 'auth', 'manifest', 'ready'] as const;
export type SessionPhase = (typeof SESSION_PHASES)[number];

/** A side of a session: the node, or the coordinator it connected to. */
export type SessionSide = 'coordinator' | 'node';

/** Which side receives: the coordinator receives node frames, the node receives coordinator frames. */
export type Receiver = SessionSide;

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

/** The coordinator frames that open a phase, on both sides: the coordinator sends them, the node receives them. */
const PHASE_OPENED_BY: Readonly<Partial<Record<FrameType, SessionPhase>>> = {
  challenge: 'auth',
  welcome: 'manifest',
  manifest_ack: 'ready',
};

/** True when `receiver` may accept a frame of `type` in `phase` (`error` and `bye` always). */
export function frameAllowed(receiver: Receiver, phase: SessionPhase, type: FrameType): boolean {
  return ALWAYS.includes(type) || SESSION_ORDER[receiver][phase].includes(type);
}

/**
 * One session's frame order as one side sees it (NODE_PROTOCOL.md §4), as an explicit state
 * machine: what this side may receive and send in its phase, and the phase each frame moves it to.
 * The phase moves with the coordinator's `challenge`, `welcome` and `manifest_ack`, so the
 * coordinator moves it when it sends them and the node when it receives them; a session's side
 * builds one per WebSocket and passes every inbound frame through `receive` and every outbound
 * frame through `send` (or asks `maySend` first when a frame is optional).
 */
export class SessionOrder {
  readonly side: SessionSide;
  #phase: SessionPhase = 'hello';

  constructor(side: SessionSide) {
    this.side = side;
  }

  get phase(): SessionPhase {
    return this.#phase;
  }

  /** True once the manifest is acknowledged: jobs, presence and drain may flow. */
  get ready(): boolean {
    return this.#phase === 'ready';
  }

  /** Whether this side accepts a frame of `type` from its peer now. */
  mayReceive(type: FrameType): boolean {
    return frameAllowed(this.side, this.#phase, type);
  }

  /** Whether this side may send a frame of `type` now (its peer accepts it in this phase). */
  maySend(type: FrameType): boolean {
    return frameAllowed(this.side === 'node' ? 'coordinator' : 'node', this.#phase, type);
  }

  /**
   * Takes a frame from the peer, moving to the phase it opens. True when it opened one (the node's
   * challenge, welcome and first manifest_ack), so the caller knows a step of the handshake is done.
   * @throws ProtocolError `out_of_order` when this side does not accept it now.
   */
  receive(type: FrameType): boolean {
    if (!this.mayReceive(type)) throw new ProtocolError('out_of_order', `${type} in phase ${this.#phase}.`);
    return this.#enter(type);
  }

  /**
   * Records a frame this side sends, moving to the phase it opens; true when it opened one.
   * @throws ProtocolError `out_of_order` when the peer would refuse it now (a bug of this side).
   */
  send(type: FrameType): boolean {
    if (!this.maySend(type)) {
      throw new ProtocolError('out_of_order', `${this.side} may not send ${type} in phase ${this.#phase}.`);
    }
    return this.#enter(type);
  }

  #enter(type: FrameType): boolean {
    const next = PHASE_OPENED_BY[type] ?? this.#phase;
    if (next === this.#phase) return false;
    this.#phase = next;
    return true;
  }
}
