/**
 * Replica relay: a paid chat completion sent to the replica that holds the node (local) vs the
 * same request sent to another replica, which relays it over peer-RPC (relayed) — two coordinator
 * replicas, each in a process of its own, on one PostgreSQL schema and one Redis, the fixed-reply
 * node in a third process, all measured in the same run. Maximum throughput with autocannon (its
 * own process), in alternating rounds; latency at a fixed rate with the open-loop generator, in
 * alternating rounds pooled per side; the CPU each replica process spent per request.
 *
 * Run: node --conditions=gpumesh-source --import tsx bench/replica-relay.ts [--duration 4] [--rounds 3] [--rate 100]
 *      [--pg postgres://postgres@127.0.0.1:5432/test] [--redis redis://127.0.0.1:6379]
 *      [--cpu-prof DIR] (V8 CPU profiles of both replicas' main threads: holder.cpuprofile, relaying.cpuprofile)
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { buildApp } from '../coordinator/src/app.js';
import { loadConfig } from '../coordinator/src/config.js';
import { migrate } from '../coordinator/src/db/migrate.js';
import { openStore } from '../coordinator/src/db/store.js';
import { credit } from '../coordinator/src/ledger/credit.js';
import { signIn } from '../coordinator/src/testing/sign-in.js';
import { autocannonLoad, spawnFixedReplyNode, spawnReady, stopProcess } from './load-tools.js';
import { openLoop, percentile } from './open-loop.js';
import type { ReplicaSettings } from './replica-process.js';
import { readThreads, usedBetween } from './thread-times.js';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '4' },
    rounds: { type: 'string', default: '3' },
    rate: { type: 'string', default: '100' },
    connections: { type: 'string', default: '16' },
    pg: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/test' },
    redis: { type: 'string', default: 'redis://127.0.0.1:6379' },
    'cpu-prof': { type: 'string' },
  },
});
const DURATION_S = Number(values.duration);
const ROUNDS = Number(values.rounds);
const RATE = Number(values.rate);
const CONNECTIONS = Number(values.connections);
const USD = 1_000_000_000n;
const BODY = JSON.stringify({
  model: 'bench',
  messages: [{ role: 'user', content: 'Say hello.' }],
  max_tokens: 6,
});

// Both services must be here: this benchmark is about replicas sharing them.
const probe = new Redis(values.redis, {
  lazyConnect: true,
  maxRetriesPerRequest: 0,
  retryStrategy: () => null,
});
probe.on('error', () => {});
await probe.connect().catch(() => {
  throw new Error(`Redis is not reachable at ${values.redis}`);
});
probe.disconnect();

const schema = `bench_replicas_${process.pid}`;
const admin = openStore({ pgUrl: values.pg, schema: 'public' });
await sql`create schema ${sql.id(schema)}`.execute(admin.db);
const store = openStore({ pgUrl: values.pg, schema });
await migrate(store.db);

// A user, a key and credits, set up through the app on the shared database.
const masterKey = randomBytes(32).toString('hex');
const setup = await buildApp({
  config: loadConfig({
    overrides: {
      dataDir: '/nonexistent-unused',
      databaseUrl: values.pg,
      databaseSchema: schema,
      masterKey,
      logLevel: 'silent',
      rateLimit: { enabled: false },
    },
  }),
  store,
  logger: false,
});
const jwt = await signIn(setup, privateKeyToAccount(generatePrivateKey()));
const auth = { authorization: `Bearer ${jwt}` };
const { key } = (
  await setup.inject({ method: 'POST', url: '/api/router/keys', headers: auth, payload: { name: 'bench' } })
).json() as { key: string };
const user = (await setup.inject({ method: 'GET', url: '/api/user', headers: auth })).json() as {
  id: string;
};
await credit(store.db, { userId: user.id, amountNano: 1_000_000n * USD, ref: 'bench' });
await setup.close();

type Replica = { base: string; hubUrl: string; peerUrl: string; pid: number; stop(): Promise<void> };
const settings: ReplicaSettings = {
  pgUrl: values.pg,
  schema,
  redisUrl: values.redis,
  masterKey,
  namespace: `bench-${process.pid}`,
  announceMs: 250,
};
async function replica(name: string): Promise<Replica> {
  const profileDir = values['cpu-prof'];
  const own = profileDir
    ? { ...settings, cpuProfile: path.resolve(profileDir, `${name}.cpuprofile`) }
    : settings;
  const { child, output } = await spawnReady('./replica-process.ts', [JSON.stringify(own)], '"ready"');
  const info = JSON.parse(output.trim().split('\n').at(-1)!) as Omit<Replica, 'pid' | 'stop'>;
  return { ...info, pid: child.pid!, stop: () => stopProcess(child) };
}
const holder = await replica('holder');
const relaying = await replica('relaying');
const node = await spawnFixedReplyNode(holder.hubUrl, generatePrivateKey());
const keyHeader = { authorization: `Bearer ${key}` };
const chatUrl = (r: Replica) => `${r.base}/v1/chat/completions`;
// The relaying replica learns of the node from the holder's announcement.
for (let tries = 0; ; tries++) {
  const res = await fetch(`${relaying.base}/v1/models`, { headers: keyHeader });
  const { data } = (await res.json()) as { data: { id: string }[] };
  if (data.some((m) => m.id === 'bench')) break;
  if (tries > 200) throw new Error('the relaying replica never listed the node');
  await new Promise((r) => setTimeout(r, 50));
}

/** Max throughput against one replica, and the CPU both replica processes spent per request. */
async function max(r: Replica) {
  const before = [holder, relaying].map((x) => readThreads(x.pid));
  const result = await autocannonLoad({
    url: chatUrl(r),
    headers: keyHeader,
    body: BODY,
    connections: CONNECTIONS,
    durationS: DURATION_S,
  });
  const cpu = [holder, relaying].map((x, i) => {
    const after = readThreads(x.pid);
    const start = before[i];
    if (!after || !start) return 0;
    const used = usedBetween(x.pid, start, after);
    return (used.main + used.others) / 1000 / result.requests.total;
  });
  const failed = result.errors + result.timeouts + result.non2xx;
  return { rps: result.requests.average, failed, holderCpu: cpu[0]!, relayingCpu: cpu[1]! };
}

await max(holder); // warm-up, both paths
await max(relaying);
console.log(
  `\nMax throughput, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${DURATION_S} s each way, alternating:`,
);
const ratios: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  const order = round % 2 === 0 ? [holder, relaying] : [relaying, holder];
  const out = new Map<Replica, Awaited<ReturnType<typeof max>>>();
  for (const r of order) out.set(r, await max(r));
  const local = out.get(holder)!;
  const relayed = out.get(relaying)!;
  ratios.push(relayed.rps / local.rps);
  console.log(
    `  round ${round + 1}: local ${local.rps.toFixed(0)} req/s (holder ${local.holderCpu.toFixed(0)} µs CPU a request)` +
      `, relayed ${relayed.rps.toFixed(0)} req/s (relaying replica ${relayed.relayingCpu.toFixed(0)} µs + holder ${relayed.holderCpu.toFixed(0)} µs)` +
      (local.failed || relayed.failed ? ` (failed: ${local.failed}, ${relayed.failed})` : ''),
  );
}
ratios.sort((a, b) => a - b);
console.log(
  `  relayed / local: ${ratios.map((r) => r.toFixed(2)).join(', ')} (median ${ratios[Math.floor(ratios.length / 2)]!.toFixed(2)})`,
);

console.log(
  `\nFixed rate ${RATE} req/s, open loop, ${ROUNDS} rounds of ${DURATION_S} s each way, alternating:`,
);
const steady = (r: Replica) =>
  openLoop({
    url: chatUrl(r),
    headers: { 'content-type': 'application/json', ...keyHeader },
    body: BODY,
    rate: RATE,
    durationS: DURATION_S,
    connections: CONNECTIONS,
  });
const pooled = new Map<Replica, number[]>([
  [holder, []],
  [relaying, []],
]);
let failedSteady = 0;
for (let round = 0; round < ROUNDS; round++) {
  for (const r of round % 2 === 0 ? [holder, relaying] : [relaying, holder]) {
    const result = await steady(r);
    failedSteady += result.failed;
    pooled.get(r)!.push(...result.latencies);
  }
}
const sorted = (r: Replica) => Float64Array.from(pooled.get(r)!).sort();
const local = sorted(holder);
const relayed = sorted(relaying);
const ms = (µs: number) => (µs / 1000).toFixed(3);
for (const [name, l] of [
  ['local  ', local],
  ['relayed', relayed],
] as const) {
  console.log(
    `  ${name}  p50 ${ms(percentile(l, 0.5))} ms  p90 ${ms(percentile(l, 0.9))} ms  p99 ${ms(percentile(l, 0.99))} ms`,
  );
}
console.log(
  `  added by the relay: p50 ${ms(percentile(relayed, 0.5) - percentile(local, 0.5))} ms, p99 ${ms(percentile(relayed, 0.99) - percentile(local, 0.99))} ms` +
    (failedSteady ? ` (failed ${failedSteady})` : ''),
);

await stopProcess(node);
await relaying.stop();
await holder.stop();
await store.close();
await sql`drop schema ${sql.id(schema)} cascade`.execute(admin.db);
await admin.close();
process.exit(0);
