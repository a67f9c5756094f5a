import { expect, test } from 'vitest';
import { exceedsJsonDepth } from './exceeds-json-depth.js';

const nested = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;

test('default: depth counts objects and arrays, up to the limit inclusive', () => {
  expect(exceedsJsonDepth('{}', 1)).toBe(false);
  expect(exceedsJsonDepth('{"a":[{"b":1}]}', 3)).toBe(false);
  expect(exceedsJsonDepth('{"a":[{"b":1}]}', 2)).toBe(true);
  expect(exceedsJsonDepth(nested(64), 64)).toBe(false);
  expect(exceedsJsonDepth(nested(65), 64)).toBe(true);
  expect(exceedsJsonDepth('[[],[],[]]', 2)).toBe(false);
  expect(exceedsJsonDepth('"x"', 0)).toBe(false);
});

test('behavior: brackets inside strings, escaped quotes included, do not count', () => {
  expect(exceedsJsonDepth(JSON.stringify({ a: '[[[[{{{{' }), 1)).toBe(false);
  expect(exceedsJsonDepth(JSON.stringify({ a: 'say \\"[[[[\\" ok', b: '\\' }), 1)).toBe(false);
  expect(exceedsJsonDepth(`{"a":"\\\\","b":[[1]]}`, 2)).toBe(true);
});

test('behavior: 50,000 levels are refused in one linear pass', () => {
  const start = performance.now();
  expect(exceedsJsonDepth(`${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}`, 64)).toBe(true);
  expect(exceedsJsonDepth(`[${'"x",'.repeat(200_000)}1]`, 64)).toBe(false);
  expect(performance.now() - start).toBeLessThan(1_000);
});
