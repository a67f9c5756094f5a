import { readdirSync, readFileSync } from 'node:fs';

/** Per thread id: CPU time and run-queue wait, ns, and the thread's name. */
export type ThreadReading = Map<number, { run: number; wait: number; name?: string }>;

/** Linux: CPU time and run-queue wait of each thread of a process (/proc/…/schedstat); null elsewhere. */
export function readThreads(pid: number): ThreadReading | null {
  try {
    const reading: ThreadReading = new Map();
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const [run, wait] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ').map(Number);
      const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      reading.set(Number(tid), { run: run!, wait: wait!, name });
    }
    return reading;
  } catch {
    return null;
  }
}

/**
 * What a process used between two readings (ns): CPU of its main thread and of its other threads,
 * and their run-queue wait. Threads that ended between the readings are left out.
 */
export function usedBetween(
  pid: number,
  before: ThreadReading,
  after: ThreadReading,
): { main: number; others: number; waited: number } {
  const used = { main: 0, others: 0, waited: 0 };
  for (const [tid, { run, wait }] of after) {
    const start = before.get(tid) ?? { run: 0, wait: 0 };
    used[tid === pid ? 'main' : 'others'] += run - start.run;
    used.waited += wait - start.wait;
  }
  return used;
}

/** CPU used between two readings (ns) by thread, most first: "main" or the thread's name and id. */
export function usedByThread(pid: number, before: ThreadReading, after: ThreadReading): [string, number][] {
  const used: [string, number][] = [];
  for (const [tid, { run, name = '?' }] of after) {
    const ns = run - (before.get(tid)?.run ?? 0);
    if (ns > 0) used.push([tid === pid ? 'main' : `${name}#${tid}`, ns]);
  }
  return used.sort((a, b) => b[1] - a[1]);
}
