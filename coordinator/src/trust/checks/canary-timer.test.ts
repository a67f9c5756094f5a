import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import type { Entry } from '../../router/pick-index.js';
import { CanaryTimer, type CanaryTimerOptions } from './canary-timer.js';

/** random() 0.5 makes every gap ln 2 × the mean: 693 ms at a mean of 1 s (ticks every 250 ms). */
const MEAN_MS = 1_000;
const target = (nodeId: string) => ({ node: { nodeId } }) as Entry;

let timer: CanaryTimer | undefined;
beforeEach(() => {
  vi.useFakeTimers({ now: 0 });
});
afterEach(() => {
  timer?.stop();
  vi.useRealTimers();
});

function start(options: Partial<CanaryTimerOptions> = {}) {
  const sent: string[] = [];
  const warn = vi.fn();
  timer = new CanaryTimer({
    meanMs: () => MEAN_MS,
    clock: { now: () => Date.now() },
    random: () => 0.5,
    targets: () => [target('a'), target('b')],
    run: async (t) => {
      sent.push(t.node.nodeId);
    },
    log: { warn },
    ...options,
  });
  timer.start();
  return { sent, warn };
}

test('default: a node’s first canary comes a gap after it is first seen, the next a gap after that', async () => {
  const { sent } = start();
  await vi.advanceTimersByTimeAsync(750); // seen at 250: due at 943
  expect(sent).toEqual([]);
  await vi.advanceTimersByTimeAsync(250); // 1000: sent, next due at 1693
  expect(sent).toEqual(['a', 'b']);
  await vi.advanceTimersByTimeAsync(500); // 1500
  expect(sent).toEqual(['a', 'b']);
  await vi.advanceTimersByTimeAsync(250); // 1750
  expect(sent).toEqual(['a', 'b', 'a', 'b']);
});

test('behavior: never two canaries at once to one node', async () => {
  let calls = 0;
  start({
    targets: () => [target('a')],
    run: () => {
      calls++;
      return new Promise(() => {}); // never answers
    },
  });
  await vi.advanceTimersByTimeAsync(10 * MEAN_MS);
  expect(calls).toBe(1);
});

test('behavior: no canaries when the mean is 0', async () => {
  const { sent } = start({ meanMs: () => 0 });
  await vi.advanceTimersByTimeAsync(10 * MEAN_MS);
  expect(sent).toEqual([]);
});

test('error: a failed canary is logged and the node’s next one still comes', async () => {
  let calls = 0;
  const { warn } = start({
    targets: () => [target('a')],
    run: async () => {
      calls++;
      throw new Error('node lost');
    },
  });
  await vi.advanceTimersByTimeAsync(1_750);
  expect(calls).toBe(2);
  expect(warn).toHaveBeenCalledWith({ err: expect.any(Error), nodeId: 'a' }, 'canary failed');
});
