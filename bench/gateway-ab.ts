/**
 * Builds of the coordinator in one process, loaded in alternating slices: an A/B of the paid
 * path that a busy machine cannot bias (both sides see the same noise), for changes measured one
 * at a time (issue 42). Each root is a checkout (a git worktree) whose coordinator/src is imported
 * as is; each gets its own SQLite file, its own fixed-reply node process and a funded key. A plain
 * fastify echo is loaded in the same rotation, and an idle slice (no load) measures what the process
 * uses by itself (timers, checkpoints, every app's), subtracted from each slice for its wall
 * time: on a busy machine few requests carry it. Prints, per side, CPU per request (this process's
 * main thread, and its other threads: ledger writer, GC, libuv) summed over its slices.
 *
 * Run: node --conditions=gpumesh-source --import tsx bench/gateway-ab.ts --builds A=<root>,B=<root>[,…] [--slices 6] [--duration 3]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import Fastify from 'fastify';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { autocannonLoad, spawnFixedReplyNode, stopProcess } from './load-tools.js';
import { readThreads, usedBetween } from './thread-times.js';

const { values } = parseArgs({
  options: {
    builds: { type: 'string' },
    slices: { type: 'string', default: '6' },
    duration: { type: 'string', default: '3' },
    connections: { type: 'string', default: '32' },
  },
});
if (!values.builds) throw new Error('--builds A=<root>,B=<root>');
const builds = values.builds.split(',').map((spec) => spec.split('=') as [string, string]);
const USD = 1_000_000_000n;
const BODY = JSON.stringify({
  model: 'bench',
  messages: [{ role: 'user', content: 'Say hello.' }],
  max_tokens: 6,
});

type Side = { name: string; url?: string; headers: Record<string, string>; stop(): Promise<void> };

async function coordinator(name: string, root: string): Promise<Side> {
  const src = path.resolve(root, 'coordinator/src');
  const { buildApp } = await import(`${src}/app.ts`);
  const { loadConfig } = await import(`${src}/config.ts`);
  const { migrate } = await import(`${src}/db/migrate.ts`);
  const { openStore } = await import(`${src}/db/store.ts`);
  const { HUB_PATH } = await import(`${src}/hub/hub-plugin.ts`);
  const { credit } = await import(`${src}/ledger/credit.ts`);
  const { signIn } = await import(`${src}/testing/sign-in.ts`);
  const dataDir = mkdtempSync(path.join(tmpdir(), `gm-ab-${name}-`));
  const store = openStore({ sqlitePath: path.join(dataDir, 'gpumesh.db') });
  await migrate(store.db);
  const config = loadConfig({ overrides: { dataDir, logLevel: 'silent', rateLimit: { enabled: false } } });
  const app = await buildApp({ config, store, logger: false, tierOf: async () => 'platinum' });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const jwt = await signIn(app, privateKeyToAccount(generatePrivateKey()));
  const auth = { authorization: `Bearer ${jwt}` };
  const { key } = (
    await app.inject({ method: 'POST', url: '/api/router/keys', headers: auth, payload: { name: 'ab' } })
  ).json() as { key: string };
  const user = (await app.inject({ method: 'GET', url: '/api/user', headers: auth })).json() as {
    id: string;
  };
  await credit(store.db, { userId: user.id, amountNano: 1_000_000n * USD, ref: 'ab' });
  const node = await spawnFixedReplyNode(`${url.replace('http', 'ws')}${HUB_PATH}`, generatePrivateKey());
  while (!app.hub.index.pick({ modelId: 'bench' }).ok) await new Promise((r) => setTimeout(r, 10));
  return {
    name,
    url: `${url}/v1/chat/completions`,
    headers: { authorization: `Bearer ${key}` },
    async stop() {
      await stopProcess(node);
      await app.close();
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

const echo = Fastify({ logger: false });
echo.post('/echo', async (request) => ({ ok: true, echo: request.body }));
await echo.listen({ port: 0, host: '127.0.0.1' });
const sides: Side[] = [
  { name: 'idle', headers: {}, stop: async () => {} },
  {
    name: 'echo',
    url: `http://127.0.0.1:${(echo.server.address() as AddressInfo).port}/echo`,
    headers: {},
    stop: () => echo.close(),
  },
];
for (const [name, root] of builds) sides.push(await coordinator(name, root));
const totals = new Map(sides.map((s) => [s.name, { requests: 0, main: 0, others: 0, wallMs: 0 }]));

async function slice(
  side: Side,
  durationS: number,
): Promise<{ requests: number; main: number; others: number; wallMs: number }> {
  const before = readThreads(process.pid)!;
  const started = performance.now();
  let requests = 0;
  if (side.url) {
    const result = await autocannonLoad({
      url: side.url,
      headers: side.headers,
      body: BODY,
      connections: Number(values.connections),
      durationS,
    });
    requests = result.requests.total;
  } else await new Promise((resolve) => setTimeout(resolve, durationS * 1000));
  const used = usedBetween(process.pid, before, readThreads(process.pid)!);
  return { requests, main: used.main, others: used.others, wallMs: performance.now() - started };
}

for (const side of sides) await slice(side, 2); // warm-up
const slices = Number(values.slices);
for (let i = 0; i < slices; i++) {
  // Each slice in another order, so no side always follows the same one.
  const order = i % 2 === 0 ? sides : [...sides].reverse();
  for (const side of order) {
    const got = await slice(side, Number(values.duration));
    const total = totals.get(side.name)!;
    total.requests += got.requests;
    total.main += got.main;
    total.others += got.others;
    total.wallMs += got.wallMs;
    if (!side.url) {
      console.log(`slice ${i + 1} idle ${((got.main + got.others) / got.wallMs).toFixed(0)} µs CPU a second`);
      continue;
    }
    const µs = (ns: number) => (ns / 1000 / got.requests).toFixed(0);
    console.log(
      `slice ${i + 1} ${side.name.padEnd(4)} ${got.requests} requests  main ${µs(got.main)} µs  others ${µs(got.others)} µs`,
    );
  }
}
const idle = totals.get('idle')!;
/** The idle process's CPU per ms of wall time, ns: main thread and others. */
const idleRate = { main: idle.main / idle.wallMs, others: idle.others / idle.wallMs };
const perRequest = (name: string) => {
  const t = totals.get(name)!;
  return {
    main: (t.main - idleRate.main * t.wallMs) / 1000 / t.requests,
    others: (t.others - idleRate.others * t.wallMs) / 1000 / t.requests,
    requests: t.requests,
  };
};
const e = perRequest('echo');
console.log(
  `\nCPU per request over ${slices} slices of ${values.duration} s, less the idle process's ${(idleRate.main + idleRate.others).toFixed(0)} µs a second (main + other threads, µs):`,
);
for (const name of ['echo', ...builds.map(([n]) => n)]) {
  const p = perRequest(name);
  const all = p.main + p.others;
  console.log(
    `  ${name.padEnd(4)} ${p.main.toFixed(0).padStart(5)} + ${p.others.toFixed(0).padStart(5)} = ${all.toFixed(0).padStart(5)}  (${p.requests} requests${name === 'echo' ? '' : `; ÷ echo ${(all / (e.main + e.others)).toFixed(1)}`})`,
  );
}
const [first, ...rest] = builds.map(([n]) => perRequest(n));
for (const [i, other] of rest.entries())
  console.log(
    `  ${builds[i + 1]![0]} ÷ ${builds[0]![0]} = ${((other.main + other.others) / (first!.main + first!.others)).toFixed(2)}`,
  );
for (const side of sides) await side.stop();
process.exit(0);
