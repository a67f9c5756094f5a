import { describe, expect, test } from 'vitest';
import { loadConfig } from '../../config.js';
import { MAX_AUTO_SEQUENCES, sequencesForVram } from './sequences-for-vram.js';

const GIB = 1024 ** 3;

// No GPU here: the sizing is checked as the numbers node-llama-cpp's estimates would give it.
describe('sequencesForVram', () => {
  test('behavior: as many sequences as their KV caches fit in 90 % of the VRAM left, 1 to 16', () => {
    // 8 GiB free, 1 GiB per sequence (e.g. an 8B model at 8k context): 7.
    expect(sequencesForVram({ freeVramBytes: 8 * GIB, sequenceVramBytes: GIB })).toBe(7);
    // Nearly full: still one job at a time.
    expect(sequencesForVram({ freeVramBytes: 0.2 * GIB, sequenceVramBytes: GIB })).toBe(1);
    // A big card and a small context: capped.
    expect(sequencesForVram({ freeVramBytes: 80 * GIB, sequenceVramBytes: 0.05 * GIB })).toBe(
      MAX_AUTO_SEQUENCES,
    );
  });

  test('default: without --max-concurrency the node sizes it itself (auto); a setting overrides it', () => {
    expect(loadConfig({ flags: { 'state-dir': '/tmp/gm-x' }, env: {} }).maxConcurrency).toBeUndefined();
    expect(
      loadConfig({ flags: { 'state-dir': '/tmp/gm-x', 'max-concurrency': '3' }, env: {} }).maxConcurrency,
    ).toBe(3);
  });
});
