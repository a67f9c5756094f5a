/**
 * True for a YYYY-MM-DD that names a day of the calendar: not 2026-02-30, 2026-13-45 or
 * 9999-99-99 (which `Date.parse` rolls over or reads as NaN, and NaN's `toISOString` throws).
 */
export function isDay(value: string): boolean {
  const ms = Date.parse(value);
  return Number.isFinite(ms) && new Date(ms).toISOString().slice(0, 10) === value;
}
