/**
 * Network simulator (issue 33): N protocol-correct simulated nodes (sim-node.ts, in a process of
 * their own: sim-fleet-process.ts) connected to the real coordinator (replica-process.ts, on
 * PostgreSQL and Redis, in a process of its own so its memory and CPU are its own in /proc), with
 * heartbeats, presence changes, churn (drain, vanish, silence, reconnect) and paid traffic at a
 * fixed rate; then the same over two replicas, the nodes split between them and the traffic sent
 * to the first (half of it relayed). For each size it prints the coordinator's memory and CPU per
 * connected node, the cost of a heartbeat and of a presence change, the pick over the live index,
 * the paid requests' CPU and latency, and the latency of /v1/models, /api/router/models, /network
 * and /api/network/stats.
 *
 * Run: npm run -w bench network-sim -- --sizes 100,1000,10000 [--replicas 1] [--rate 20] [--phase-s 15]
 *      npm run -w bench network-sim -- --sizes 20000 --replicas 2
 *      npm run -w bench network-sim -- --sizes 10000 --schema history_sim   (on a seeded year of history)
 * Goals (issue 33): ≤ 50 KB coordinator memory per connected node; pick ≤ 20 µs at 10,000 nodes;
 * /network and /v1/models p50 ≤ 50 ms at 10,000 nodes.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { migrate } from '../coordinator/src/db/migrate.js';
import { openStore } from '../coordinator/src/db/store.js';
import { BENCH_MASTER_KEY } from './history-seed.js';
import { POPULAR_MODELS, simModelId, writeSimCatalog } from './sim-catalog.js';
import { cpuShare, fundedUser, paidTraffic, procSample, quantile, sampleLatency } from './sim-measure.js';
import {
  children,
  type Fleet,
  probe,
  type Replica,
  startFleet,
  startReplica,
  stop,
} from './sim-processes.js';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '100,1000,10000' },
    replicas: { type: 'string', default: '1' },
    rate: { type: 'string', default: '20' },
    'phase-s': { type: 'string', default: '15' },
    samples: { type: 'string', default: '30' },
    /** Views of /network and /api/network/stats 2.1 s apart (each one computed, not the kept answer). */
    'computed-samples': { type: 'string', default: '5' },
    models: { type: 'string', default: '200' },
    'job-ms': { type: 'string', default: '100' },
    'presence-rate': { type: 'string', default: '2000' },
    'churn-per-node-s': { type: 'string', default: '0.0005' },
    pg: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/test' },
    redis: { type: 'string', default: 'redis://127.0.0.1:6379' },
    seed: { type: 'string', default: 'a' },
    /**
     * An existing schema to run on instead of a fresh one per size, kept afterwards: a year of
     * history seeded by `history-seed --sim-seed <seed> --sim-nodes <size>`, its 200 nodes the
     * ones of this run that /network lists.
     */
    schema: { type: 'string' },
    /** Writes a CPU profile of each replica over the paid traffic, churn and pages phases to <file>-<nodes>[-r<i>].cpuprofile. */
    'cpu-profile': { type: 'string' },
  },
});
const REPLICAS = Number(values.replicas);
const RATE = Number(values.rate);
const PHASE_S = Number(values['phase-s']);
const SAMPLES = Number(values.samples);
const COMPUTED_SAMPLES = Number(values['computed-samples']);
const MODELS = Number(values.models);
const USD = 1_000_000_000n;
const HEARTBEAT_S = 10; // the protocol's default heartbeat (welcome.heartbeatIntervalMs)
const tag = `network_sim_${process.pid}`;
const log = (text: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${text}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Summed /proc samples of the replicas. */
const sampleAll = (replicas: Replica[]) => replicas.map((r) => procSample(r.pid));
const share = (a: ReturnType<typeof sampleAll>, b: ReturnType<typeof sampleAll>) =>
  a.map((s, i) => cpuShare(s, b[i]!));

/** CPU shares of each replica while `work` runs (at least `seconds`). */
async function measure<T>(replicas: Replica[], seconds: number, work: () => Promise<T>) {
  const before = sampleAll(replicas);
  const [result] = await Promise.all([work(), sleep(seconds * 1000)]);
  const after = sampleAll(replicas);
  return { result, shares: share(before, after), seconds: (after[0]!.at - before[0]!.at) / 1000 };
}

const ms = (sorted: number[]) =>
  `p50 ${quantile(sorted, 0.5).toFixed(1)} ms, p99 ${quantile(sorted, 0.99).toFixed(1)} ms`;
const kb = (bytes: number) => (bytes / 1024).toFixed(1);
const summary: Record<string, unknown>[] = [];

async function stage(nodes: number): Promise<void> {
  log(
    `=== ${nodes} nodes on ${REPLICAS} replica(s), ${MODELS} models; load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  const schema = values.schema ?? `${tag}_${nodes}`;
  if (!values.schema) {
    const admin = openStore({ pgUrl: values.pg, schema: 'public' });
    schemas.add(schema);
    await sql`create schema ${sql.id(schema)}`.execute(admin.db);
    await admin.close();
  }
  const store = openStore({ pgUrl: values.pg, schema });
  await migrate(store.db);
  const dir = mkdtempSync(path.join(tmpdir(), 'gm-network-sim-'));
  const catalogFile = path.join(dir, 'catalog.json');
  writeSimCatalog(catalogFile, MODELS);
  // On a kept schema, the benches' master key: the schema's secrets are sealed with it.
  const masterKey = values.schema ? BENCH_MASTER_KEY : randomBytes(32).toString('hex');
  const replicas: Replica[] = [];
  for (let i = 0; i < REPLICAS; i++) {
    replicas.push(
      await startReplica({
        pgUrl: values.pg!,
        schema,
        redisUrl: values.redis!,
        masterKey,
        namespace: tag,
        announceMs: 1000,
        peer: REPLICAS > 1,
        catalogFile,
        // Canaries would judge the simulated nodes' fixed answers; the cost measured is the network's.
        canaryIntervalMs: 0,
      }),
    );
  }
  const row: Record<string, unknown> = { nodes, replicas: REPLICAS };
  let fleet: Fleet | undefined;
  try {
    const user = await fundedUser(replicas[0]!.base, store.db, 1_000_000n * USD);
    await sleep(2000);
    const memory0 = await Promise.all(
      replicas.map((r) => probe<{ rss: number; heapUsed: number }>(r, { cmd: 'memory' })),
    );
    const idle0 = await measure(replicas, 5, async () => {});
    log(
      `empty: RSS ${memory0.map((m) => `${(m.rss / 2 ** 20).toFixed(0)} MB`).join(' / ')}, heap ${memory0.map((m) => `${(m.heapUsed / 2 ** 20).toFixed(0)} MB`).join(' / ')}, CPU ${idle0.shares.map((s) => (s * 100).toFixed(1)).join(' / ')} %`,
    );

    fleet = startFleet(
      {
        urls: replicas.map((r) => r.hubUrl),
        nodes,
        seed: values.seed!,
        models: MODELS,
        jobMs: Number(values['job-ms']),
        capacity: 8,
        connectConcurrency: 64,
        reconnectMs: 2000,
      },
      REPLICAS,
    );
    await fleet.next('keys').then(async function wait(e): Promise<void> {
      if (!e.ready) return wait(await fleet!.next('keys'));
    });
    const connect = await measure(replicas, 0, () => fleet!.next('connected'));
    const perConnectMs = connect.shares.map((s) => (s * connect.seconds * 1000 * REPLICAS) / nodes);
    log(
      `connected ${connect.result.ready} of ${nodes} in ${connect.seconds.toFixed(1)} s; coordinator CPU per connect ${perConnectMs.map((x) => x.toFixed(2)).join(' / ')} ms`,
    );
    row.connectS = connect.seconds;
    row.cpuPerConnectMs = perConnectMs;

    await sleep(3000);
    const memory = await Promise.all(
      replicas.map((r) => probe<{ rss: number; heapUsed: number; sessions: number }>(r, { cmd: 'memory' })),
    );
    const rssPerNode = memory.map((m, i) => (m.rss - memory0[i]!.rss) / m.sessions);
    const heapPerNode = memory.map((m, i) => (m.heapUsed - memory0[i]!.heapUsed) / m.sessions);
    log(
      `memory per connected node: RSS ${rssPerNode.map(kb).join(' / ')} KB, heap ${heapPerNode.map(kb).join(' / ')} KB (sessions ${memory.map((m) => m.sessions).join(' / ')}; RSS ${memory.map((m) => `${(m.rss / 2 ** 20).toFixed(0)} MB`).join(' / ')})`,
    );
    row.rssKbPerNode = rssPerNode.map((b) => b / 1024);
    row.heapKbPerNode = heapPerNode.map((b) => b / 1024);

    const idle = await measure(replicas, PHASE_S, async () => {});
    const perNodeUs = idle.shares.map((s, i) => ((s - idle0.shares[i]!) * 1e6 * REPLICAS) / nodes);
    // Each node pings every HEARTBEAT_S and so does the coordinator: two exchanges per node per period.
    const perExchangeUs = perNodeUs.map((u) => (u * HEARTBEAT_S) / 2);
    log(
      `idle (heartbeats${REPLICAS > 1 ? ', announcements' : ''}): CPU ${idle.shares.map((s) => (s * 100).toFixed(1)).join(' / ')} % → ${perNodeUs.map((u) => u.toFixed(2)).join(' / ')} µs per node per second; ${perExchangeUs.map((u) => u.toFixed(1)).join(' / ')} µs per ping–pong exchange`,
    );
    row.idleCpuPct = idle.shares.map((s) => s * 100);
    row.usPerNodeSecond = perNodeUs;

    const presenceRate = Math.min(Number(values['presence-rate']), nodes * 2);
    const presence = await measure(replicas, 0, async () => {
      const done = fleet!.next('done:presence');
      fleet!.send({ cmd: 'presence', rate: presenceRate, durationS: PHASE_S });
      return done;
    });
    const frames = Number(presence.result.events);
    const perPresenceUs = presence.shares.map(
      (s, i) => ((s - idle.shares[i]!) * presence.seconds * 1e6) / frames,
    );
    log(
      `presence: ${frames} load changes in ${presence.seconds.toFixed(1)} s → ${perPresenceUs.map((u) => u.toFixed(1)).join(' / ')} µs CPU per presence frame (over idle)`,
    );
    row.usPerPresence = perPresenceUs;

    const pickModels = [...Array(POPULAR_MODELS).keys(), POPULAR_MODELS, POPULAR_MODELS + 1, MODELS - 1].map(
      simModelId,
    );
    const pick = await probe<{ usPerPick: number; empty: number; nodes: number }>(replicas[0]!, {
      cmd: 'pick',
      models: pickModels,
      picks: 50_000,
    });
    log(
      `pick over the live index of ${pick.nodes} nodes: ${pick.usPerPick.toFixed(2)} µs (incl. acquire+release; ${pick.empty} empty)`,
    );
    row.pickUs = pick.usPerPick;

    // The profile (--cpu-profile) covers the paid traffic, then traffic with churn and the pages.
    const profile = values['cpu-profile'];
    if (profile) for (const r of replicas) await probe(r, { cmd: 'profile', file: null });
    const traffic = await measure(replicas, 0, () =>
      paidTraffic({
        base: replicas[0]!.base,
        key: user.key,
        rate: RATE,
        durationS: PHASE_S,
        models: MODELS,
        nodes,
      }),
    );
    const perRequestUs = traffic.shares.map(
      (s, i) => ((s - idle.shares[i]!) * traffic.seconds * 1e6) / traffic.result.sent,
    );
    log(
      `paid traffic ${RATE} req/s to replica 1: ${traffic.result.ok}/${traffic.result.sent} ok ${JSON.stringify(traffic.result.statuses)}, ${ms(traffic.result.ms)}; CPU per request ${perRequestUs.map((u) => u.toFixed(0)).join(' / ')} µs`,
    );
    row.traffic = {
      sent: traffic.result.sent,
      ok: traffic.result.ok,
      p50: quantile(traffic.result.ms, 0.5),
      p99: quantile(traffic.result.ms, 0.99),
    };
    row.usPerRequest = perRequestUs;

    // Pages under traffic and churn.
    const churnRate = Math.max(1, nodes * Number(values['churn-per-node-s']));
    const auth = { authorization: `Bearer ${user.jwt}` };
    const key = { authorization: `Bearer ${user.key}` };
    const base = replicas[0]!.base;
    const churnDone = fleet.next('done:churn');
    // Long enough for the page samples and the computed views (2 × COMPUTED_SAMPLES × 2.1 s).
    const underLoadS = PHASE_S * 2 + Math.ceil(COMPUTED_SAMPLES * 4.2);
    fleet.send({ cmd: 'churn', rate: churnRate, durationS: underLoadS });
    const trafficRun = paidTraffic({
      base,
      key: user.key,
      rate: RATE,
      durationS: underLoadS,
      models: MODELS,
      nodes,
    });
    const pages: Record<string, unknown> = {};
    for (const [name, url, headers] of [
      ['/v1/models', `${base}/v1/models`, key],
      ['/api/router/models', `${base}/api/router/models`, auth],
      ['/network', `${base}/network`, {}],
      ['/api/network/stats', `${base}/api/network/stats`, {}],
    ] as const) {
      await sampleLatency(url, headers, 3); // warm-up
      const sampled = await sampleLatency(url, headers, SAMPLES);
      log(
        `  ${name.padEnd(20)} ${ms(sampled.ms)} (${(sampled.bytes / 1024).toFixed(0)} KB, status ${[...sampled.statuses].join(',')})`,
      );
      pages[name] = {
        p50: quantile(sampled.ms, 0.5),
        p99: quantile(sampled.ms, 0.99),
        kb: sampled.bytes / 1024,
      };
    }
    // The network stats are computed at most once per their 2 s max-age (pages/reuse-for.ts), so
    // the samples above time mostly the kept answer: these, 2.1 s apart, each time a computation.
    for (const [name, url] of [
      ['/network computed', `${base}/network`],
      ['/api/network/stats computed', `${base}/api/network/stats`],
    ] as const) {
      const sampled = await sampleLatency(url, {}, COMPUTED_SAMPLES, 2_100);
      log(`  ${name.padEnd(20)} ${ms(sampled.ms)} (each a fresh computation; ${sampled.ms.length} samples)`);
      pages[name] = { p50: quantile(sampled.ms, 0.5), p99: quantile(sampled.ms, 0.99) };
    }
    row.pages = pages;
    const churned = await churnDone;
    const underChurn = await trafficRun;
    if (profile)
      for (const [i, r] of replicas.entries())
        await probe(r, {
          cmd: 'profile',
          file: `${profile}-${nodes}${REPLICAS > 1 ? `-r${i + 1}` : ''}.cpuprofile`,
        });
    fleet.send({ cmd: 'status' });
    const status = await fleet.next('status');
    log(
      `churn ${churnRate}/s: ${JSON.stringify(churned.kinds)}; traffic meanwhile ${underChurn.ok}/${underChurn.sent} ok ${JSON.stringify(underChurn.statuses)}, ${ms(underChurn.ms)}; fleet: ${status.ready} ready, ${status.reconnects} reconnects, ${status.jobs} jobs, RSS ${(Number(status.rssBytes) / 2 ** 20).toFixed(0)} MB`,
    );
    row.churn = {
      rate: churnRate,
      ...(churned.kinds as object),
      ok: underChurn.ok,
      sent: underChurn.sent,
      statuses: underChurn.statuses,
    };
    row.loadAverage = loadavg();
    console.log(JSON.stringify(row));
    summary.push(row);
  } finally {
    if (fleet) {
      fleet.send({ cmd: 'stop' });
      for (const child of fleet.children) await stop(child);
    }
    for (const r of replicas) await stop(r.child);
    await store.close();
    if (!values.schema) {
      const drop = openStore({ pgUrl: values.pg, schema: 'public' });
      await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(drop.db);
      await drop.close();
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

const schemas = new Set<string>();
/** Interrupted: the children killed, this run's schemas dropped. */
const onSignal = () => {
  for (const child of children) child.kill('SIGKILL');
  const admin = openStore({ pgUrl: values.pg, schema: 'public' });
  void Promise.all(
    [...schemas].map((name) => sql`drop schema if exists ${sql.id(name)} cascade`.execute(admin.db)),
  )
    .finally(() => admin.close())
    .finally(() => process.exit(130));
};
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);
try {
  for (const size of values.sizes!.split(',').map(Number)) await stage(size);
} finally {
  for (const child of children) child.kill('SIGKILL');
  const redis = new Redis(values.redis!);
  const keys = await redis.keys(`${tag}*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
}
console.log('\nsummary');
for (const row of summary) console.log(JSON.stringify(row));
process.exit(0);
