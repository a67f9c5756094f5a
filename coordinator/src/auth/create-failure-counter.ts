import type { Redis } from 'ioredis';
import type { Clock } from '../clock.js';

/** Failures counted for one key in the current window. */
export type FailureCount = { count: number; resetInMs: number };

/** Counts failures per key in fixed windows that start at a key's first failure. */
export type FailureCounter = {
  read(key: string): Promise<FailureCount>;
  add(key: string): Promise<void>;
};

export type FailureCounterOptions = {
  windowMs: number;
  clock: Clock;
  /** Shared by every replica when set; else this process counts alone. */
  redis?: Redis;
  /** Redis key prefix. */
  namespace: string;
};

/** Keys one process remembers at most; past it the oldest windows are forgotten first. */
export const MAX_MEMORY_FAILURE_KEYS = 100_000;

// INCR and the expiry in one step, so a key can never be left without a TTL (counted forever).
const ADD_SCRIPT = `local c = redis.call('INCR', KEYS[1])
if c == 1 or redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return c`;

/**
 * A failure counter on Redis (when given) or in memory. In memory, windows follow `clock` (tests
 * move it); the map is pruned from its oldest entry, so it stays bounded under a flood of keys.
 */
export function createFailureCounter(options: FailureCounterOptions): FailureCounter {
  const { windowMs, clock, redis, namespace } = options;
  if (redis) {
    const keyOf = (key: string) => `${namespace}fail:${key}`;
    return {
      async read(key) {
        const result = await redis.multi().get(keyOf(key)).pttl(keyOf(key)).exec();
        const count = Number(result?.[0]?.[1] ?? 0);
        const ttl = Number(result?.[1]?.[1] ?? -2);
        return { count: Number.isFinite(count) ? count : 0, resetInMs: ttl > 0 ? ttl : windowMs };
      },
      async add(key) {
        await redis.eval(ADD_SCRIPT, 1, keyOf(key), String(windowMs));
      },
    };
  }
  const windows = new Map<string, { count: number; resetAt: number }>();
  const prune = (now: number) => {
    for (const [key, w] of windows) {
      if (w.resetAt > now && windows.size <= MAX_MEMORY_FAILURE_KEYS) break;
      windows.delete(key);
    }
  };
  return {
    async read(key) {
      const now = clock.now();
      const w = windows.get(key);
      if (!w || w.resetAt <= now) return { count: 0, resetInMs: windowMs };
      return { count: w.count, resetInMs: w.resetAt - now };
    },
    async add(key) {
      const now = clock.now();
      const w = windows.get(key);
      if (w && w.resetAt > now) {
        w.count++;
        return;
      }
      // Re-inserted at the end, so the map stays ordered by window start (oldest first).
      windows.delete(key);
      windows.set(key, { count: 1, resetAt: now + windowMs });
      if (windows.size > MAX_MEMORY_FAILURE_KEYS) prune(now);
    },
  };
}
