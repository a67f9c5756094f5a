import { describe, expect, test } from 'vitest';
import { TrafficSample } from './traffic-sample.js';

describe('TrafficSample', () => {
  test('default: every job of a model with light traffic is learnt', () => {
    const sample = new TrafficSample(3);
    const taken = [0, 400, 900, 1_500, 2_600].map((at) => sample.take('m', at));
    expect(taken).toEqual([true, true, true, true, true]);
  });

  test('behavior: at most perSecond jobs of one model a second, counted again the next second', () => {
    const sample = new TrafficSample(3);
    const first = Array.from({ length: 10 }, (_, i) => sample.take('m', i * 10));
    expect(first.filter(Boolean)).toHaveLength(3);
    expect(first.slice(0, 3)).toEqual([true, true, true]);
    expect(sample.take('m', 1_000)).toBe(true);
  });

  test('behavior: each model has its own budget', () => {
    const sample = new TrafficSample(1);
    expect([sample.take('a', 0), sample.take('b', 0), sample.take('a', 1), sample.take('b', 1)]).toEqual([
      true,
      true,
      false,
      false,
    ]);
  });
});
