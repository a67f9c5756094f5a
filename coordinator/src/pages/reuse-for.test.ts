import { describe, expect, test } from 'vitest';
import { reuseFor } from './reuse-for.js';

function counter() {
  let runs = 0;
  let release: (() => void) | undefined;
  return {
    get runs() {
      return runs;
    },
    compute: async () => {
      runs++;
      await new Promise<void>((r) => {
        release = r;
      });
      return runs;
    },
    finish: () => release?.(),
  };
}

describe('reuseFor', () => {
  test('default: a result is reused until maxAgeMs after its run began', async () => {
    let t = 0;
    let runs = 0;
    const get = reuseFor(
      async () => ++runs,
      2_000,
      () => t,
    );
    expect(await get()).toBe(1);
    t = 1_999;
    expect(await get()).toBe(1);
    t = 2_000;
    expect(await get()).toBe(2);
    expect(runs).toBe(2);
  });

  test('behavior: callers during a run share it', async () => {
    const c = counter();
    const get = reuseFor(c.compute, 2_000, () => 0);
    const first = get();
    const second = get();
    await Promise.resolve();
    c.finish();
    expect(await Promise.all([first, second])).toEqual([1, 1]);
    expect(c.runs).toBe(1);
  });

  test('behavior: the age counts from when the run began, not when it ended', async () => {
    let t = 0;
    let runs = 0;
    const get = reuseFor(
      async () => {
        t += 1_500; // a run that takes 1.5 s
        return ++runs;
      },
      2_000,
      () => t,
    );
    expect(await get()).toBe(1);
    t = 2_000; // 2 s after the run began, 0.5 s after it ended
    expect(await get()).toBe(2);
  });

  test('error: a failed run is not kept', async () => {
    let fail = true;
    const get = reuseFor(
      async () => {
        if (fail) throw new Error('database down');
        return 'ok';
      },
      2_000,
      () => 0,
    );
    await expect(get()).rejects.toThrow('database down');
    fail = false;
    expect(await get()).toBe('ok');
  });
});
