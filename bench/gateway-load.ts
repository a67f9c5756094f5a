/**
 * Gateway load: a paid chat completion through the coordinator (key check, pick, reserve, job over
 * WebSocket, settle + usage row) vs the same job sent straight to the node (a bare HTTP handler
 * that hands the job to the node's WebSocket session, no auth, no billing), plus a plain fastify
 * echo — all measured in the same run. Maximum throughput with autocannon; latency at a fixed rate
 * with an open-loop generator measuring microseconds (bench/open-loop.ts). autocannon runs in a
 * process of its own (bench/autocannon-process.ts), so the CPU per request printed for this
 * process is the server's alone; the open-loop generator runs in a worker thread. Each
 * fixed-reply node runs in a process of its own, as real nodes do.
 *
 * Run: node --conditions=gpumesh-source --import tsx bench/gateway-load.ts [--duration 5] [--pg postgres://…]
 *   --cpu-profile <file.cpuprofile>: only load the coordinator, and write a CPU profile of that run.
 *   --phases max,steady: which measurements to run (maximum throughput, fixed rate); `paid` is the
 *     max phase with only the echo and the coordinator (quick A/B runs). --threads: CPU by thread.
 *   --rounds 6: fixed-rate rounds each way (each --duration / 2 s), alternating.
 *   --guard: exit 1 when the max phase's CPU per paid request ÷ the echo's, measured in this run,
 *     is more than 1.5 × the ratio the README records (its "gateway-load guard" line); .ci/run.
 * Goals (issue 5): throughput ≥ 0.5 × echo; added p99 ≤ 1 ms at 1,000 req/s.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { Session } from 'node:inspector';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { sendCoalesced } from '@gpumesh/protocol/internal';
import Fastify, { type FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { type WebSocket, WebSocketServer } from 'ws';
import { buildApp } from '../coordinator/src/app.js';
import { loadConfig } from '../coordinator/src/config.js';
import { migrate } from '../coordinator/src/db/migrate.js';
import { openStore } from '../coordinator/src/db/store.js';
import { Hub } from '../coordinator/src/hub/hub.js';
import { HUB_PATH } from '../coordinator/src/hub/hub-plugin.js';
import { credit } from '../coordinator/src/ledger/credit.js';
import { signIn } from '../coordinator/src/testing/sign-in.js';
import { autocannonLoad, spawnFixedReplyNode, stopProcess } from './load-tools.js';
import { type OpenLoopResult, openLoop, percentile } from './open-loop.js';
import { readThreads, type ThreadReading, usedBetween, usedByThread } from './thread-times.js';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '32' },
    rate: { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '6' },
    pg: { type: 'string' },
    'cpu-profile': { type: 'string' },
    phases: { type: 'string', default: 'max,steady' },
    'ledger-thread': { type: 'string', default: 'on' },
    guard: { type: 'boolean', default: false },
    threads: { type: 'boolean', default: false },
  },
});
const DURATION_S = Number(values.duration);
const CONNECTIONS = Number(values.connections);
const RATE = Number(values.rate);
const ROUNDS = Number(values.rounds);
const USD = 1_000_000_000n;
const BODY = JSON.stringify({
  model: 'bench',
  messages: [{ role: 'user', content: 'Say hello.' }],
  max_tokens: 6,
});

async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

type Figures = {
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  errors: number;
  non2xx: number;
  /** CPU per request, µs: this process's main thread, its other threads, the peer process. */
  cpu?: { main: number; others: number; peer: number; loader?: number };
  /** With --threads: this process's CPU per request by thread name, µs. */
  threads?: string;
};

async function load(url: string, headers: Record<string, string>, peerPid?: number): Promise<Figures> {
  const self = readThreads(process.pid);
  const peer = peerPid ? readThreads(peerPid) : null;
  const result = await autocannonLoad({
    url,
    headers,
    body: BODY,
    connections: CONNECTIONS,
    durationS: DURATION_S,
  });
  const figures = cpuPerRequest(self, peer, peerPid, result.requests.total);
  const after = values.threads ? readThreads(process.pid) : null;
  const threads =
    self && after && result.requests.total > 0
      ? usedByThread(process.pid, self, after)
          .slice(0, 6)
          .map(([name, ns]) => `${name} ${(ns / 1000 / result.requests.total).toFixed(0)}`)
          .join(', ')
      : undefined;
  return {
    ...(threads ? { threads } : {}),
    rps: result.requests.average,
    p50: result.latency.p50,
    p90: result.latency.p90,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    ...(figures.cpu ? { cpu: { ...figures.cpu, loader: result.cpuMicros / result.requests.total } } : {}),
  };
}

function cpuPerRequest(
  self: ThreadReading | null,
  peer: ThreadReading | null,
  peerPid: number | undefined,
  requests: number,
): { cpu?: { main: number; others: number; peer: number } } {
  const selfAfter = readThreads(process.pid);
  const peerAfter = peerPid ? readThreads(peerPid) : null;
  if (!self || !selfAfter || requests === 0) return {};
  const own = usedBetween(process.pid, self, selfAfter);
  const remote = peer && peerAfter && peerPid ? usedBetween(peerPid, peer, peerAfter) : null;
  const µs = (ns: number) => ns / 1000 / requests;
  return {
    cpu: {
      main: µs(own.main),
      others: µs(own.others),
      peer: remote ? µs(remote.main + remote.others) : 0,
    },
  };
}

// 1. Plain fastify echo.
const echo = Fastify({ logger: false });
echo.post('/echo', async (request) => ({ ok: true, echo: request.body }));
const echoUrl = await listen(echo);

// 1b. The least a relay can be: node:http in, one WebSocket message to a peer process and one
// back, out — no framework, no protocol, no validation (bench/bare-relay-peer.ts). The ceiling
// of any gateway that hands a request to another process over a socket, on this machine.
const relayWss = new WebSocketServer({ noServer: true });
const relayWaiting = new Map<number, http.ServerResponse>();
let relayPeer: WebSocket | undefined;
let relayNextId = 0;
relayWss.on('connection', (ws) => {
  relayPeer = ws;
  ws.on('message', (data) => {
    const { id, response } = JSON.parse(data.toString()) as { id: number; response: unknown };
    const res = relayWaiting.get(id);
    relayWaiting.delete(id);
    res?.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(response));
  });
});
const relay = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const id = relayNextId++;
    relayWaiting.set(id, res);
    sendCoalesced(relayPeer!, `{"id":${id},"request":${Buffer.concat(chunks).toString()}}`);
  });
});
relay.on('upgrade', (req, socket, head) =>
  relayWss.handleUpgrade(req, socket, head, (ws) => relayWss.emit('connection', ws)),
);
await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
const relayUrl = `http://127.0.0.1:${(relay.address() as AddressInfo).port}`;
const relayPeerProcess = spawn(
  process.execPath,
  [
    '--conditions=gpumesh-source',
    '--import',
    'tsx',
    new URL('./bare-relay-peer.ts', import.meta.url).pathname,
    relayUrl.replace('http', 'ws'),
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
await new Promise<void>((resolve) => relayPeerProcess.stdout!.once('data', () => resolve()));
while (!relayPeer) await new Promise((r) => setTimeout(r, 10));

// 2. Straight to the node: a hub and a bare handler that sends the job to the node, nothing else.
const directHub = new Hub({ nativeUsdPriceNano: USD, tierOf: async () => 'platinum' });
const direct = Fastify({ logger: false });
const wss = new WebSocketServer({ noServer: true });
wss.on('connection', (s) => directHub.accept(s));
direct.server.on('upgrade', (req, socket, head) =>
  wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws)),
);
direct.post('/direct', (request, reply) => {
  const pick = directHub.index.pick({ modelId: 'bench' });
  if (!pick.ok) return reply.code(503).send({ error: pick.reason });
  directHub.dispatch(
    pick.candidates[0]!,
    {
      kind: 'chat',
      model: 'bench',
      request: request.body as Record<string, unknown>,
      stream: false,
      timeoutMs: 10_000,
    },
    { onResult: (r) => reply.send(r), onError: (e) => reply.code(502).send({ error: e }) },
  );
  return reply;
});
const directUrl = await listen(direct);
directHub.start();
const owner = generatePrivateKey();
const directNode = await spawnFixedReplyNode(directUrl.replace('http', 'ws'), owner);

// 3. Through the coordinator: the real app, real key, real ledger.
const dataDir = mkdtempSync(path.join(tmpdir(), 'gm-bench-'));
// On PostgreSQL, a schema of its own, dropped at the end.
const pgSchema = `bench_gateway_${process.pid}`;
if (values.pg) {
  const admin = openStore({ pgUrl: values.pg });
  await sql`create schema ${sql.id(pgSchema)}`.execute(admin.db);
  await admin.close();
}
const store = values.pg
  ? openStore({ pgUrl: values.pg, schema: pgSchema })
  : openStore({ sqlitePath: path.join(dataDir, 'gpumesh.db') });
const { db } = store;
await migrate(db);
const config = loadConfig({
  overrides: {
    dataDir,
    logLevel: 'silent',
    rateLimit: { enabled: false },
    ...(values.pg ? { databaseUrl: values.pg, databaseSchema: pgSchema } : {}),
  },
});
const app = await buildApp({
  config,
  store,
  logger: false,
  tierOf: async () => 'platinum',
  ledgerWriterThread: values['ledger-thread'] !== 'off',
});
const coordUrl = await listen(app);
const jwt = await signIn(app, privateKeyToAccount(generatePrivateKey()));
const auth = { authorization: `Bearer ${jwt}` };
const { key } = (
  await app.inject({ method: 'POST', url: '/api/router/keys', headers: auth, payload: { name: 'bench' } })
).json() as {
  key: string;
};
const user = (await app.inject({ method: 'GET', url: '/api/user', headers: auth })).json() as { id: string };
await credit(db, { userId: user.id, amountNano: 1_000_000n * USD, ref: 'bench' });
const node = await spawnFixedReplyNode(`${coordUrl.replace('http', 'ws')}${HUB_PATH}`, owner);
while (!app.hub.index.pick({ modelId: 'bench' }).ok) await new Promise((r) => setTimeout(r, 10));

const keyHeader = { authorization: `Bearer ${key}` };
// Warm-up, then measure.
await load(`${coordUrl}/v1/chat/completions`, keyHeader, node.pid).catch(() => {});
const fmt = (f: Figures) =>
  `${f.rps.toFixed(0).padStart(7)} req/s  p50 ${f.p50.toFixed(2)} ms  p90 ${f.p90.toFixed(2)} ms  p99 ${f.p99.toFixed(2)} ms` +
  (f.errors || f.non2xx ? `  (errors ${f.errors}, non-2xx ${f.non2xx})` : '') +
  (f.cpu
    ? `\n                        CPU per request: main thread ${f.cpu.main.toFixed(0)} µs, other threads ${f.cpu.others.toFixed(0)} µs (ledger writer, checkpoints, libuv), peer process ${f.cpu.peer.toFixed(0)} µs, load generator ${f.cpu.loader?.toFixed(0)} µs`
    : '') +
  (f.threads ? `\n                        by thread (µs): ${f.threads}` : '');

if (values['cpu-profile']) {
  const session = new Session();
  session.connect();
  const post = (method: string) =>
    new Promise<unknown>((resolve, reject) =>
      session.post(method, (error, result) => (error ? reject(error) : resolve(result))),
    );
  await post('Profiler.enable');
  await post('Profiler.start');
  console.log(
    `through coordinator ${fmt(await load(`${coordUrl}/v1/chat/completions`, keyHeader, node.pid))}`,
  );
  const batches = app.ctx.ledger.stats;
  console.log(`ledger: ${(batches.operations / batches.transactions).toFixed(1)} operations per commit`);
  const { profile } = (await post('Profiler.stop')) as { profile: unknown };
  writeFileSync(values['cpu-profile'], JSON.stringify(profile));
  await stopProcess(node);
  await stopProcess(directNode);
  await stopProcess(relayPeerProcess);
  process.exit(0);
}

const phases = new Set(values.phases.split(','));
if (phases.has('max') || phases.has('paid')) {
  console.log(
    `\nMax throughput, ${CONNECTIONS} connections, ${DURATION_S} s each (${values.pg ? 'PostgreSQL' : 'SQLite'} ledger):`,
  );
  const e = await load(`${echoUrl}/echo`, {});
  console.log(`  fastify echo          ${fmt(e)}`);
  const paidOnly = phases.has('paid');
  const r = paidOnly ? e : await load(`${relayUrl}/relay`, {}, relayPeerProcess.pid);
  if (!paidOnly) console.log(`  bare relay            ${fmt(r)}`);
  const d = paidOnly ? e : await load(`${directUrl}/direct`, {}, directNode.pid);
  if (!paidOnly) console.log(`  straight to the node  ${fmt(d)}`);
  const c = await load(`${coordUrl}/v1/chat/completions`, keyHeader, node.pid);
  console.log(`  through coordinator   ${fmt(c)}`);
  console.log(
    `  coordinator / echo = ${(c.rps / e.rps).toFixed(2)} (goal ≥ 0.5); coordinator / direct = ${(c.rps / d.rps).toFixed(2)}; bare relay / echo = ${(r.rps / e.rps).toFixed(2)}`,
  );
  const cpuOf = (f: Figures) => (f.cpu ? f.cpu.main + f.cpu.others : Number.NaN);
  const cpuRatio = cpuOf(c) / cpuOf(e);
  console.log(`  CPU per request (all threads), coordinator ÷ echo = ${cpuRatio.toFixed(1)} (goal ≤ 3)`);
  if (values.guard) process.exitCode = guard(cpuRatio);
}

/** The CI guard: 0 when `ratio` is within 1.5 × the README's recorded ratio, else 1 (said why). */
function guard(ratio: number): number {
  const readme = readFileSync(path.join(import.meta.dirname, '../README.md'), 'utf8');
  const recorded = Number(/gateway-load guard: CPU per paid request ÷ echo ([0-9.]+)/.exec(readme)?.[1]);
  if (!Number.isFinite(recorded) || !Number.isFinite(ratio)) {
    console.error('gateway-load guard: no ratio recorded in the README or none measured');
    return 1;
  }
  const over = ratio > 1.5 * recorded;
  console.log(
    `gateway-load guard: ${ratio.toFixed(1)} measured, ${recorded} recorded, limit ${(1.5 * recorded).toFixed(1)}: ${over ? 'FAILED — the paid path got slower' : 'ok'}`,
  );
  return over ? 1 : 0;
}

const steady = (url: string, headers: Record<string, string>, durationS: number) =>
  openLoop({
    url,
    headers: { 'content-type': 'application/json', ...headers },
    body: BODY,
    rate: RATE,
    durationS,
    connections: CONNECTIONS,
  });
const ms = (µs: number) => (µs / 1000).toFixed(3);
const us = (f: Pick<OpenLoopResult, 'latencies'> & { rps?: number; failed?: number }) =>
  `${f.rps === undefined ? '' : `${f.rps.toFixed(0).padStart(7)} req/s  `}p50 ${ms(percentile(f.latencies, 0.5))} ms  p90 ${ms(percentile(f.latencies, 0.9))} ms  p99 ${ms(percentile(f.latencies, 0.99))} ms  p99.9 ${ms(percentile(f.latencies, 0.999))} ms` +
  (f.failed ? `  (failed ${f.failed})` : '');
if (phases.has('steady')) {
  // Short rounds, alternating which side goes first, so that a burst of the machine's own noise
  // (this VM's stolen time comes in bursts of several ms) falls on both sides alike; each side's
  // latencies are pooled over its rounds.
  const roundS = DURATION_S / 2;
  console.log(
    `\nFixed rate ${RATE} req/s, open loop, ${ROUNDS} rounds of ${roundS} s each way, alternating:`,
  );
  await steady(`${directUrl}/direct`, {}, 1); // warm-up of the generator and both paths
  await steady(`${coordUrl}/v1/chat/completions`, keyHeader, 1);
  const direct: OpenLoopResult[] = [];
  const coord: OpenLoopResult[] = [];
  // Both paths' servers share this process's event loop: its delay is measured over all rounds.
  const loopDelay = monitorEventLoopDelay({ resolution: 1 });
  loopDelay.enable();
  for (let round = 0; round < ROUNDS; round++) {
    const runDirect = async () => direct.push(await steady(`${directUrl}/direct`, {}, roundS));
    const runCoord = async () =>
      coord.push(await steady(`${coordUrl}/v1/chat/completions`, keyHeader, roundS));
    if (round % 2 === 0) await runDirect().then(runCoord);
    else await runCoord().then(runDirect);
  }
  loopDelay.disable();
  const pool = (results: OpenLoopResult[]) => ({
    latencies: Float64Array.from(results.flatMap((r) => [...r.latencies])).sort(),
    failed: results.reduce((n, r) => n + r.failed, 0),
  });
  const d = pool(direct);
  const c = pool(coord);
  console.log(`  straight to the node  ${us(d)}`);
  console.log(`  through coordinator   ${us(c)}`);
  console.log(
    `  (this process's event loop delay over the rounds: p50 ${(loopDelay.percentile(50) / 1e6).toFixed(2)} ms, p99 ${(loopDelay.percentile(99) / 1e6).toFixed(2)} ms, max ${(loopDelay.max / 1e6).toFixed(2)} ms)`,
  );
  const added = (p: number) => percentile(c.latencies, p) - percentile(d.latencies, p);
  const perRound = coord.map((r, i) => r.p99 - direct[i]!.p99).sort((a, b) => a - b);
  console.log(
    `  added latency: p50 ${ms(added(0.5))} ms, p99 ${ms(added(0.99))} ms (goal p99 ≤ 1 ms); per round, added p99: ${perRound.map(ms).join(', ')} ms (median ${ms(perRound[Math.floor(perRound.length / 2)]!)})`,
  );
}
await app.ctx.ledger.idle();
const rows = await db.selectFrom('usage_records').select(db.fn.countAll().as('n')).executeTakeFirst();
console.log(`\nusage rows written: ${rows?.n}`);
await stopProcess(node);
await stopProcess(directNode);
await stopProcess(relayPeerProcess);
relay.close();
await app.close();
await direct.close();
await echo.close();
directHub.close();
await store.close();
if (values.pg) {
  const admin = openStore({ pgUrl: values.pg });
  await sql`drop schema ${sql.id(pgSchema)} cascade`.execute(admin.db);
  await admin.close();
}
rmSync(dataDir, { recursive: true, force: true });
process.exit(process.exitCode ?? 0);
