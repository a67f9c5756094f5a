import { describe, expect, test } from 'vitest';
import { reconnectDelayMs } from './reconnect-delay.js';

describe('reconnectDelayMs', () => {
  test('default: doubles from the minimum and caps at the maximum', () => {
    const top = () => 0.999999;
    expect([0, 1, 2, 3, 4, 5, 6].map((attempt) => reconnectDelayMs(attempt, 500, 8_000, top))).toEqual([
      500, 1000, 2000, 4000, 8000, 8000, 8000,
    ]);
    expect(reconnectDelayMs(1_000, 500, 8_000, top)).toBe(8000);
  });

  test('behavior: jitter spreads each delay over the upper half', () => {
    expect(reconnectDelayMs(3, 500, 30_000, () => 0)).toBe(2000);
    expect(reconnectDelayMs(3, 500, 30_000, () => 0.5)).toBe(3000);
    const delays = new Set(Array.from({ length: 50 }, () => reconnectDelayMs(3, 500, 30_000, Math.random)));
    expect(delays.size).toBeGreaterThan(10);
    for (const delay of delays) expect(delay).toBeGreaterThanOrEqual(2000);
  });
});
