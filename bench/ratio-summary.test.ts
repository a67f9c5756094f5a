import { describe, expect, test } from 'vitest';
import { summarizeRatios } from './ratio-summary.js';

describe('summarizeRatios', () => {
  test('default', () => {
    const summary = summarizeRatios([1.0, 0.9, 1.2, 0.95, 1.05]);
    expect(summary).toMatchObject({ count: 5, median: 1.0, q1: 0.95, q3: 1.05, min: 0.9, max: 1.2 });
    expect(summary.medianLow).toBeGreaterThanOrEqual(0.9);
    expect(summary.medianLow).toBeLessThanOrEqual(summary.median);
    expect(summary.medianHigh).toBeGreaterThanOrEqual(summary.median);
    expect(summary.medianHigh).toBeLessThanOrEqual(1.2);
  });

  test('behavior: an even count interpolates the median and quartiles', () => {
    expect(summarizeRatios([1, 2, 3, 4])).toMatchObject({ median: 2.5, q1: 1.75, q3: 3.25 });
  });

  test('behavior: the same rounds give the same interval; more rounds a narrower one', () => {
    const noisy = (n: number) => Array.from({ length: n }, (_, i) => 0.97 + 0.2 * Math.sin(i * 12.9898));
    const few = summarizeRatios(noisy(20));
    expect(summarizeRatios(noisy(20))).toEqual(few);
    const many = summarizeRatios(noisy(400));
    expect(many.medianHigh - many.medianLow).toBeLessThan(few.medianHigh - few.medianLow);
    expect(many.medianLow).toBeLessThan(0.97);
    expect(many.medianHigh).toBeGreaterThan(0.97);
  });

  test('behavior: outlying rounds move the median less than the mean', () => {
    const summary = summarizeRatios([0.96, 0.97, 0.98, 0.97, 3.9, 0.3, 0.96]);
    expect(summary.median).toBe(0.97);
    expect(summary.min).toBe(0.3);
    expect(summary.max).toBe(3.9);
  });

  test('error: no ratios', () => {
    expect(() => summarizeRatios([])).toThrow('no ratios');
  });
});
