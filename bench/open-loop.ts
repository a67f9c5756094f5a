/**
 * An open-loop load generator: sends requests at a fixed rate, evenly spaced (to the timer's
 * millisecond), whatever the server does — a slow answer never delays the next request, so there
 * is no coordinated omission — and measures each latency in microseconds from the moment the
 * request was written. Runs in a worker thread so the measuring side has its own event loop.
 *
 * (autocannon's fixed-rate mode releases each second's requests in a burst and reports whole
 * milliseconds, which hides sub-millisecond differences; it is used here for maximum throughput.)
 */
import http from 'node:http';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

export type OpenLoopOptions = {
  url: string;
  headers: Record<string, string>;
  body: string;
  /** Requests per second. */
  rate: number;
  durationS: number;
  /** Keep-alive connections at most. */
  connections: number;
};

export type OpenLoopResult = {
  sent: number;
  ok: number;
  /** Non-2xx answers and transport errors. */
  failed: number;
  rps: number;
  /** Latency percentiles, microseconds. */
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  /** Every request's latency, µs, sorted. */
  latencies: Float64Array;
};

export function openLoop(options: OpenLoopOptions): Promise<OpenLoopResult> {
  return new Promise((resolve, reject) => {
    // Node 20 does not pass tsx's loader on to workers: the worker loads this file through it.
    const self = JSON.stringify(import.meta.url);
    const source = `import('tsx/esm/api').then(({ tsImport }) => tsImport(${self}, ${self}))`;
    const worker = new Worker(source, { eval: true, workerData: options });
    worker.once('message', resolve);
    worker.once('error', reject);
  });
}

/** The p-quantile (0–1) of sorted values, nearest rank. */
export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

async function run(o: OpenLoopOptions): Promise<OpenLoopResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: o.connections });
  const target = new URL(o.url);
  const total = Math.round(o.rate * o.durationS);
  const latencies = new Float64Array(total);
  let done = 0;
  let ok = 0;
  let failed = 0;
  const intervalNs = 1e9 / o.rate;
  const body = Buffer.from(o.body);
  const headers = { ...o.headers, 'content-length': String(body.length) };
  const start = process.hrtime.bigint();
  let finish!: () => void;
  const finished = new Promise<void>((r) => {
    finish = r;
  });
  const record = (i: number, sentAt: bigint, good: boolean) => {
    latencies[i] = Number(process.hrtime.bigint() - sentAt) / 1000;
    if (good) ok++;
    else failed++;
    if (++done === total) finish();
  };
  const fire = (i: number) => {
    const sentAt = process.hrtime.bigint();
    const req = http.request(
      { agent, hostname: target.hostname, port: target.port, path: target.pathname, method: 'POST', headers },
      (res) => {
        res.on('data', () => {});
        res.on('end', () => record(i, sentAt, (res.statusCode ?? 0) < 300));
      },
    );
    req.on('error', () => record(i, sentAt, false));
    req.end(body);
  };
  let next = 0;
  const tick = () => {
    const elapsed = Number(process.hrtime.bigint() - start);
    const due = Math.min(total, Math.floor(elapsed / intervalNs) + 1);
    while (next < due) fire(next++);
    if (next < total) setTimeout(tick, 0);
  };
  tick();
  await finished;
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  agent.destroy();
  const sorted = latencies.sort();
  return {
    sent: total,
    ok,
    failed,
    rps: total / seconds,
    p50: percentile(sorted, 0.5),
    p90: percentile(sorted, 0.9),
    p99: percentile(sorted, 0.99),
    p999: percentile(sorted, 0.999),
    latencies: sorted,
  };
}

if (!isMainThread && parentPort) {
  parentPort.postMessage(await run(workerData as OpenLoopOptions));
}
