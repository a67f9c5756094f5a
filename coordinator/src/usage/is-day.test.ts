import { expect, test } from 'vitest';
import { isDay } from './is-day.js';

test('default: a day of the calendar', () => {
  expect(['2026-03-10', '2024-02-29', '0000-01-01', '9999-12-31'].every(isDay)).toBe(true);
});

test('error: days the calendar does not have, or not YYYY-MM-DD', () => {
  for (const value of [
    '9999-99-99',
    '2026-13-45',
    '2026-02-30',
    '2025-02-29',
    '2026-3-10',
    '2026-03-10T00:00',
    '',
  ])
    expect(isDay(value), value).toBe(false);
});
