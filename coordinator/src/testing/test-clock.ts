import type { Clock } from '../clock.js';

/** A clock tests move by hand. */
export type TestClock = Clock & { advance(ms: number): void; set(ms: number): void };

/** A manual clock starting at `startMs` (default: the real now). */
export function createTestClock(startMs = Date.now()): TestClock {
  let now = startMs;
  return {
    now: () => now,
    advance: (ms) => {
      now += ms;
    },
    set: (ms) => {
      now = ms;
    },
  };
}
