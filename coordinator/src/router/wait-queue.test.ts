import { afterEach, expect, test } from 'vitest';
import { WaitQueue } from './wait-queue.js';

let queue: WaitQueue;
afterEach(() => queue?.close());

test('behavior: woken one at a time, taking turns by client, so a burst cannot starve a lone request', async () => {
  queue = new WaitQueue({ depth: 100, waitMs: 5_000 });
  const served: string[] = [];
  const deadline = queue.deadline();
  const waits = [
    ...Array.from({ length: 5 }, (_, i) =>
      queue.wait('m', 'burst', deadline).then(() => served.push(`burst${i}`)),
    ),
    queue.wait('m', 'lone', deadline).then(() => served.push('lone')),
  ];
  expect(queue.waiting('m')).toBe(6);
  for (let i = 0; i < 6; i++) {
    queue.wake('m');
    await Promise.resolve();
  }
  await Promise.all(waits);
  expect(served).toEqual(['burst0', 'lone', 'burst1', 'burst2', 'burst3', 'burst4']);
  expect(queue.waiting('m')).toBe(0);
});

test('error: a full queue refuses at once with 503; a wait past its deadline resolves false', async () => {
  queue = new WaitQueue({ depth: 1, waitMs: 30 });
  const first = queue.wait('m', 'a', queue.deadline());
  expect(() => queue.wait('m', 'b', queue.deadline())).toThrow(
    expect.objectContaining({ code: 'no_provider_available', retryAfterS: 1 }),
  );
  expect(await first).toBe(false);
  expect(queue.waiting('m')).toBe(0);
});

test('behavior: a woken request beaten to the slot waits again at the head of the line', async () => {
  queue = new WaitQueue({ depth: 10, waitMs: 5_000 });
  const deadline = queue.deadline();
  const order: string[] = [];
  const a = queue.wait('m', 'a', deadline);
  const b = queue.wait('m', 'b', deadline).then(() => order.push('b'));
  queue.wake('m');
  expect(await a).toBe(true);
  // a found the slot taken: it waits again, first in line.
  const again = queue.wait('m', 'a', deadline, true).then(() => order.push('a'));
  queue.wake('m');
  queue.wake('m');
  await Promise.all([again, b]);
  expect(order).toEqual(['a', 'b']);
});

test('behavior: past half the queue, a client holds at most a quarter of it, so a burst leaves room for others', async () => {
  queue = new WaitQueue({ depth: 8, waitMs: 50 });
  const deadline = queue.deadline();
  const burst = Array.from({ length: 4 }, () => queue.wait('m', 'burst', deadline));
  expect(() => queue.wait('m', 'burst', deadline)).toThrow(
    expect.objectContaining({ code: 'no_provider_available' }),
  );
  const lone = queue.wait('m', 'lone', deadline);
  expect(queue.waiting('m')).toBe(5);
  queue.wake('m');
  queue.wake('m');
  expect(await Promise.all([burst[0], lone])).toEqual([true, true]);
  expect(await Promise.all(burst.slice(1))).toEqual([false, false, false]);
});
