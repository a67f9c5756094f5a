/**
 * Time as a dependency: everything that compares against "now" (JWT and nonce expiry, rewards)
 * takes a Clock, so tests move time instead of waiting for it.
 */
export type Clock = {
  /** Milliseconds since the Unix epoch. */
  now(): number;
};

/** The real clock. */
export const systemClock: Clock = Object.freeze({ now: () => Date.now() });
