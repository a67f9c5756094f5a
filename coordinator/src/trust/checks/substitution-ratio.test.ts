import { expect, test } from 'vitest';
import { LOG_RATIO_FLOOR, logRatio } from './substitution-ratio.js';

test('default: Σ ln q − ln p over the tokens p keeps', () => {
  expect(logRatio([-1, -2, -0.5], [-0.5, -2.5, -0.5])).toBeCloseTo(0, 12);
  expect(logRatio([-1, null, -0.5], [-0.5, null, -0.25])).toBeCloseTo(0.75, 12);
});

test('behavior: a token p keeps that q could not have drawn is the floor; one p does not keep is skipped', () => {
  expect(logRatio([-1, -1], [-0.5, null])).toBe(LOG_RATIO_FLOOR);
  expect(logRatio([null, -1], [-3, -0.5])).toBeCloseTo(0.5, 12);
});
