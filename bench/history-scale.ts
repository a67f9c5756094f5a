/**
 * What a year of history costs the pages that read it (issue 33): the real app (buildApp on the
 * seeded PostgreSQL schema of bench/history-seed.ts, 200 nodes in its index), each page asked
 * `--runs` times after a warm-up through app.inject, p50 and p99 in ms, at each `--stages` size
 * (the seeder grows the schema between stages), and the database's size per million requests. A
 * page that takes seconds is asked at least 5 times, then until 45 s have passed. With the usage
 * rollups (coordinator/src/usage/roll-usage.ts), they are caught up before measuring.
 * The heavy user (10 % of requests) reads its usage summary and activity, the heavy owner (20
 * nodes, 10 % of requests) its earnings chart.
 *
 * Run: node --conditions=gpumesh-source --import tsx bench/history-scale.ts --schema history_bench
 *   [--stages 1000000,3000000,10000000] [--runs 30] [--pg postgres://…] [--drop]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { privateKeyToAccount } from 'viem/accounts';
import { buildApp } from '../coordinator/src/app.js';
import { loadConfig } from '../coordinator/src/config.js';
import { migrate } from '../coordinator/src/db/migrate.js';
import { openStore } from '../coordinator/src/db/store.js';
import { signIn } from '../coordinator/src/testing/sign-in.js';
import { encodeActivityCursor } from '../coordinator/src/usage/activity-cursor.js';
import {
  BENCH_MASTER_KEY,
  DAY_MS,
  HEAVY_OWNER_KEY,
  HEAVY_USER_KEY,
  MODELS,
  NODES,
  seededNodeIds,
  seedHistory,
  YEAR_MS,
} from './history-seed.js';

const { values } = parseArgs({
  options: {
    pg: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/test' },
    schema: { type: 'string', default: 'history_bench' },
    stages: { type: 'string', default: '1000000,3000000,10000000' },
    runs: { type: 'string', default: '30' },
    drop: { type: 'boolean', default: false },
  },
});
const RUNS = Number(values.runs);
const WARMUP = 3;
const MIN_RUNS = 5;
const PROBE_BUDGET_MS = 45_000;

const admin = openStore({ pgUrl: values.pg });
await sql`create schema if not exists ${sql.id(values.schema)}`.execute(admin.db);
await admin.close();
const store = openStore({ pgUrl: values.pg, schema: values.schema });
await migrate(store.db);

type Probe = { name: string; url: string; as?: 'user' | 'owner' };

for (const stage of values.stages.split(',').map(Number)) {
  const t0 = performance.now();
  const { endMs, added } = await seedHistory({ db: store.db, rows: stage, log: (l) => console.error(l) });
  if (added > 0)
    console.error(`seeded to ${stage.toLocaleString('en')} in ${Math.round(performance.now() - t0)} ms`);
  await measure(stage, endMs);
}
if (values.drop) await sql`drop schema ${sql.id(values.schema)} cascade`.execute(store.db);
await store.close();

async function measure(rows: number, endMs: number): Promise<void> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'gm-history-'));
  const config = loadConfig({
    overrides: {
      dataDir,
      databaseUrl: values.pg,
      databaseSchema: values.schema,
      masterKey: BENCH_MASTER_KEY,
      publicUrl: 'http://gpumesh.bench',
      logLevel: 'silent',
      rateLimit: { enabled: false },
    },
  });
  const app = await buildApp({ config, store, logger: false });
  await app.ready();
  // Canaries and the reputation guard would act on the seeded nodes; the pages are measured alone.
  app.canaries.stop();
  app.reputation.stop();
  // The rollups caught up first (the app's own roller runs too; they take turns): what a
  // coordinator that has run all along would have. A first run folds the whole history here.
  // Only where the migrations made the rollups (imported by path at run time): the same bench
  // measures the code from before them.
  const rollStart = performance.now();
  let folded: number | null = null;
  const rollModule = ['..', 'coordinator', 'src', 'usage', 'roll-usage.js'].join('/');
  const rolled = await sql<{ t: string | null }>`select to_regclass('usage_roll_state')::text as t`.execute(
    store.db,
  );
  const roller = (rolled.rows[0]?.t ? await import(rollModule) : undefined) as
    | {
        rollUsage: (
          db: typeof store.db,
          p: { now: number; batchRows: number },
        ) => Promise<{ folded: number; caughtUp: boolean }>;
      }
    | undefined;
  for (; roller; ) {
    // A backlog in one fold (one transaction, a hash aggregate over it all): much faster than
    // the app's batches of 50,000 for a history migrated in at once.
    const step = await roller.rollUsage(store.db, { now: Date.now(), batchRows: 100_000_000 });
    folded = (folded ?? 0) + step.folded;
    if (step.caughtUp) break;
  }
  const rollMs = performance.now() - rollStart;
  const nodeIds = await seededNodeIds(store.db);
  for (let i = 0; i < NODES; i++) {
    app.hub.index.upsert({
      nodeId: nodeIds[i]!,
      owner: null,
      tierRank: 1,
      scopes: new Set(['infer.chat']),
      state: 'online',
      models: [i % MODELS, (i + 3) % MODELS].map((m) => ({
        modelId: `bench-model-${m}`,
        family: 'chat',
        contextLength: 8192,
        maxConcurrency: 4,
        priceIn: 100_000_000n,
        priceOut: 300_000_000n,
        currency: 'USD' as const,
      })),
    });
  }
  const tokens = {
    user: await signIn(app, privateKeyToAccount(HEAVY_USER_KEY)),
    owner: await signIn(app, privateKeyToAccount(HEAVY_OWNER_KEY)),
  };
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  const deep = encodeActivityCursor({ createdAt: endMs - YEAR_MS / 2, id: 'ffffffff' });
  const yearFrom = new Date(endMs - YEAR_MS + DAY_MS).toISOString();
  const probes: Probe[] = [
    { name: '/network', url: '/network' },
    { name: '/api/network/stats', url: '/api/network/stats' },
    { name: 'usage summary (30 days)', url: '/api/router/usage', as: 'user' },
    {
      name: 'usage summary (365 days)',
      url: `/api/router/usage?from=${day(endMs - YEAR_MS + DAY_MS)}&to=${day(Date.now())}`,
      as: 'user',
    },
    { name: 'activity, first page', url: '/api/router/activity', as: 'user' },
    { name: 'activity, page at 6 months', url: `/api/router/activity?cursor=${deep}`, as: 'user' },
    { name: 'earnings by day (30 days)', url: '/api/provider/earnings?by=day', as: 'owner' },
    { name: 'earnings by node (30 days)', url: '/api/provider/earnings?by=node', as: 'owner' },
    { name: 'earnings by model (30 days)', url: '/api/provider/earnings?by=model', as: 'owner' },
    {
      name: 'earnings by day (365 days)',
      url: `/api/provider/earnings?by=day&from=${yearFrom}`,
      as: 'owner',
    },
  ];
  const size = await sql<{ total: string; usage: string; rollups: string }>`
    select sum(pg_total_relation_size(c.oid))::bigint as total,
      sum(case when c.relname = 'usage_records' then pg_total_relation_size(c.oid) else 0 end)::bigint as usage,
      sum(case when c.relname like 'usage\\_%' and c.relname <> 'usage_records' then pg_total_relation_size(c.oid) else 0 end)::bigint as rollups
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = ${values.schema} and c.relkind in ('r', 'm')`.execute(store.db);
  const mb = (bytes: string) => Number(bytes) / 2 ** 20;
  const perM = rows / 1e6;
  console.log(`\n### ${rows.toLocaleString('en')} usage rows`);
  console.log(
    `database ${mb(size.rows[0]!.total).toFixed(0)} MB (${(mb(size.rows[0]!.total) / perM).toFixed(0)} MB per million requests; usage_records with its indexes ${(mb(size.rows[0]!.usage) / perM).toFixed(0)} MB per million; the rollups ${mb(size.rows[0]!.rollups).toFixed(1)} MB in all)`,
  );
  console.log(
    folded === null
      ? 'no rollups in this code'
      : `rollups: ${folded.toLocaleString('en')} usage rows folded before measuring, in ${Math.round(rollMs)} ms`,
  );
  console.log('| page | p50 ms | p99 ms | runs |\n| --- | --- | --- | --- |');
  for (const probe of probes) {
    const headers = probe.as ? { authorization: `Bearer ${tokens[probe.as]}` } : undefined;
    const times: number[] = [];
    const began = performance.now();
    for (let i = 0; i < WARMUP + RUNS; i++) {
      // A page that takes seconds gets fewer runs: at least MIN_RUNS, then until PROBE_BUDGET_MS.
      if (i >= WARMUP + MIN_RUNS && performance.now() - began > PROBE_BUDGET_MS) break;
      const start = performance.now();
      const res = await app.inject({ method: 'GET', url: probe.url, ...(headers ? { headers } : {}) });
      const ms = performance.now() - start;
      if (res.statusCode !== 200)
        throw new Error(`${probe.url}: ${res.statusCode} ${res.body.slice(0, 300)}`);
      if (i >= WARMUP) times.push(ms);
    }
    times.sort((a, b) => a - b);
    const at = (q: number) => times[Math.min(times.length - 1, Math.ceil(q * times.length) - 1)]!;
    console.log(`| ${probe.name} | ${at(0.5).toFixed(1)} | ${at(0.99).toFixed(1)} | ${times.length} |`);
  }
  await app.close();
  rmSync(dataDir, { recursive: true, force: true });
}
