import { describe, expect, test } from 'vitest';
import { windowParts } from './node-usage-rows.js';
import { HOUR_MS } from './roll-usage.js';

const DAY_MS = 86_400_000;
const D = Date.UTC(2026, 0, 10);

describe('windowParts', () => {
  test('default: whole days in the middle, whole hours beside them, partial hours raw', () => {
    expect(windowParts(D - 2 * HOUR_MS - 5, D + 2 * DAY_MS + 3 * HOUR_MS + 7)).toEqual({
      raw: [
        [D - 2 * HOUR_MS - 5, D - 2 * HOUR_MS],
        [D + 2 * DAY_MS + 3 * HOUR_MS, D + 2 * DAY_MS + 3 * HOUR_MS + 7],
      ],
      hours: [
        [D - 2 * HOUR_MS, D],
        [D + 2 * DAY_MS, D + 2 * DAY_MS + 3 * HOUR_MS],
      ],
      days: ['2026-01-10', '2026-01-12'],
      rolled: [D - 2 * HOUR_MS, D + 2 * DAY_MS + 3 * HOUR_MS],
    });
  });

  test('behavior: no end — every day from the first whole one', () => {
    expect(windowParts(D - HOUR_MS / 2, null)).toEqual({
      raw: [[D - HOUR_MS / 2, D]],
      hours: [],
      days: ['2026-01-10', null],
      rolled: [D, null],
    });
  });

  test('behavior: within a day, hours only; within an hour, raw only', () => {
    expect(windowParts(D + 1, D + 5 * HOUR_MS)).toEqual({
      raw: [[D + 1, D + HOUR_MS]],
      hours: [[D + HOUR_MS, D + 5 * HOUR_MS]],
      days: null,
      rolled: [D + HOUR_MS, D + 5 * HOUR_MS],
    });
    expect(windowParts(D + 1, D + HOUR_MS - 1)).toEqual({
      raw: [[D + 1, D + HOUR_MS - 1]],
      hours: [],
      days: null,
      rolled: null,
    });
  });
});
