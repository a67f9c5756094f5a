/**
 * Burst: N streamed chat requests fired at once, from several API keys, at M real node daemons with
 * K slots each — more than they can take at once, so most wait in the router's queue
 * (coordinator/src/router/wait-queue.ts). Baseline, measured in the same run: the same nodes
 * through the same coordinator driven at exactly M×K requests in flight (every slot busy, nobody
 * waiting) — the nodes' own capacity, in jobs per second, and the time to first byte of a request
 * that does not wait.
 *
 * Reported: completion rate (200s / N, and the 503s), queue wait p50/p99 (a request's time to first
 * byte minus the baseline's median TTFB: the time it spent waiting for a slot), and the burst's
 * throughput (requests completed per second from the first send to the last answer) as a ratio of
 * the capacity. The nodes are fixed-reply runtimes in this process whose jobs take a known time
 * (`--job-ms`), as a GPU's would; the figures are the router's, not a model's.
 *
 * Run: node --conditions=gpumesh-source --import tsx bench/burst.ts [--n 256] [--m 2] [--k 4]
 *   [--keys 4] [--job-ms 160] [--baseline-s 4]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { type NodeDaemon, startNodeDaemon, usdOffer } from '@gpumesh/node/testing';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { buildApp } from '../coordinator/src/app.js';
import { loadConfig } from '../coordinator/src/config.js';
import { migrate } from '../coordinator/src/db/migrate.js';
import { openStore } from '../coordinator/src/db/store.js';
import { HUB_PATH } from '../coordinator/src/hub/hub-plugin.js';
import { credit } from '../coordinator/src/ledger/credit.js';
import { signIn } from '../coordinator/src/testing/sign-in.js';
import { percentile } from './open-loop.js';

/** The p-th value of `values` (sorted here). */
const pct = (values: number[], p: number) => percentile(Float64Array.from(values).sort(), p);

const { values } = parseArgs({
  options: {
    n: { type: 'string', default: '256' },
    m: { type: 'string', default: '2' },
    k: { type: 'string', default: '4' },
    keys: { type: 'string', default: '4' },
    'job-ms': { type: 'string', default: '160' },
    'baseline-s': { type: 'string', default: '4' },
  },
});
const N = Number(values.n);
const M = Number(values.m);
const K = Number(values.k);
const KEYS = Number(values.keys);
const JOB_MS = Number(values['job-ms']);
const BASELINE_S = Number(values['baseline-s']);
const TOKENS = 8;
const USD = 1_000_000_000n;

const dataDir = mkdtempSync(path.join(tmpdir(), 'gm-burst-'));
const store = openStore({ sqlitePath: path.join(dataDir, 'gpumesh.db') });
await migrate(store.db);
const config = loadConfig({
  overrides: { dataDir, logLevel: 'silent', rateLimit: { enabled: false } },
});
const app = await buildApp({ config, store, logger: false, tierOf: async () => 'platinum' });
await app.listen({ port: 0, host: '127.0.0.1' });
const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
const jwt = await signIn(app, privateKeyToAccount(generatePrivateKey()));
const auth = { authorization: `Bearer ${jwt}` };
const user = (await app.inject({ method: 'GET', url: '/api/user', headers: auth })).json() as { id: string };
await credit(store.db, { userId: user.id, amountNano: 1_000n * USD, ref: 'burst-seed' });
const keys: string[] = [];
for (let i = 0; i < KEYS; i++) {
  const res = await app.inject({
    method: 'POST',
    url: '/api/router/keys',
    headers: auth,
    payload: { name: `k${i}` },
  });
  keys.push((res.json() as { key: string }).key);
}

const nodes: NodeDaemon[] = [];
for (let i = 0; i < M; i++) {
  nodes.push(
    await startNodeDaemon({
      url: `${base.replace('http', 'ws')}${HUB_PATH}`,
      models: [usdOffer('burst', USD, 2n * USD, { maxConcurrency: K })],
      replyTokens: Array.from({ length: TOKENS }, (_, t) => ` t${t}`),
      chunkDelayMs: JOB_MS / TOKENS,
      // An owner (platinum here, as tierOf says) so the coordinator grants the node its K slots.
      ownerPrivateKey: generatePrivateKey(),
    }),
  );
}
while (!app.hub.index.pick({ modelId: 'burst', limit: M }).ok) await new Promise((r) => setTimeout(r, 20));
const granted = [...(app.hub.index.offers('burst')?.values() ?? [])].reduce(
  (sum, e) => sum + e.offer.maxConcurrency,
  0,
);

const BODY = JSON.stringify({ model: 'burst', messages: [{ role: 'user', content: 'hi' }], stream: true });
type Outcome = { status: number; ttfbMs: number; endMs: number };
async function one(key: string, t0: number): Promise<Outcome> {
  const sent = performance.now();
  const res = await fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: BODY,
  });
  const reader = res.body!.getReader();
  const first = await reader.read();
  const ttfbMs = performance.now() - sent;
  if (!first.done) while (!(await reader.read()).done);
  return { status: res.status, ttfbMs, endMs: performance.now() - t0 };
}

// Baseline: every slot busy, nobody waiting (one closed-loop client per slot).
const slots = M * K;
const baselineStart = performance.now();
const baselineTtfb: number[] = [];
let baselineDone = 0;
await Promise.all(
  Array.from({ length: slots }, async (_, i) => {
    while (performance.now() - baselineStart < BASELINE_S * 1000) {
      const out = await one(keys[i % KEYS]!, baselineStart);
      if (out.status === 200) {
        baselineDone++;
        baselineTtfb.push(out.ttfbMs);
      }
    }
  }),
);
const capacity = baselineDone / ((performance.now() - baselineStart) / 1000);
const baseTtfb = pct(baselineTtfb, 0.5);

// The burst: N at once, round robin over the keys.
const t0 = performance.now();
const outcomes = await Promise.all(Array.from({ length: N }, (_, i) => one(keys[i % KEYS]!, t0)));
const ok = outcomes.filter((o) => o.status === 200);
const waits = ok.map((o) => Math.max(0, o.ttfbMs - baseTtfb));
const spanS = Math.max(...ok.map((o) => o.endMs)) / 1000;
const throughput = ok.length / spanS;
const figures = {
  n: N,
  nodes: M,
  slotsPerNode: K,
  slotsGranted: granted,
  keys: KEYS,
  jobMs: JOB_MS,
  completionRate: ok.length / N,
  refused503: outcomes.filter((o) => o.status === 503).length,
  otherStatuses: outcomes.filter((o) => o.status !== 200 && o.status !== 503).length,
  baselineJobsPerS: Number(capacity.toFixed(1)),
  baselineTtfbMs: Number(baseTtfb.toFixed(1)),
  queueWaitP50Ms: Number(pct(waits, 0.5).toFixed(0)),
  queueWaitP99Ms: Number(pct(waits, 0.99).toFixed(0)),
  burstJobsPerS: Number(throughput.toFixed(1)),
  throughputRatio: Number((throughput / capacity).toFixed(3)),
};
console.log(JSON.stringify(figures));
console.log(
  `burst of ${N} streams on ${M} nodes × ${K} slots (${JOB_MS} ms jobs): ${(figures.completionRate * 100).toFixed(1)}% completed ` +
    `(${figures.refused503} × 503); queue wait p50 ${figures.queueWaitP50Ms} ms, p99 ${figures.queueWaitP99Ms} ms; ` +
    `throughput ${figures.burstJobsPerS}/s = ${figures.throughputRatio} × the nodes' capacity (${figures.baselineJobsPerS}/s)`,
);

for (const node of nodes) node.kill();
await app.close();
await store.close();
rmSync(dataDir, { recursive: true, force: true });
