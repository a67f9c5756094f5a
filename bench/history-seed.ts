/**
 * A year of synthetic history in PostgreSQL, for bench/history-scale.ts (issue 33): usage rows,
 * verifications, node sessions and misses, node owners, payouts — in the real schema (migrated
 * first), written server-side (`insert … select … from generate_series`, in batches), never row by
 * row from JavaScript. Run again with a larger `--rows` to grow the same schema: it adds the rows
 * missing, spread over the same year, so curves over rows come from one database.
 *
 * The shape: 200 nodes, each serving 2 of 8 models; one heavy owner owning 20 of them, which carry
 * 10 % of all requests (1M at 10M rows); one heavy user sending 10 % of all requests through 3 API
 * keys; 5,000 other users. 97 % of requests complete, 2 % fail on the node, 1 % the client leaves.
 * One verification per 100 requests (2 % failed), one node session per node per day, misses per
 * node per day, a payout per owner per week. Ledger balances are NOT written: the bench reads usage,
 * not money, so the books of this data do not balance (and need not).
 *
 * Run: node --conditions=gpumesh-source --import tsx bench/history-seed.ts --schema history_bench
 *   [--rows 10000000] [--pg postgres://postgres@127.0.0.1:5432/test] [--batch 250000]
 *   [--sim-seed a --sim-nodes 10000]   (the nodes are the simulator's: bench/network-sim.ts --schema)
 */
import { parseArgs } from 'node:util';
import { type Kysely, sql } from 'kysely';
import { getAddress } from 'viem';
import { privateKeyToAccount, privateKeyToAddress } from 'viem/accounts';
import { migrate } from '../coordinator/src/db/migrate.js';
import type { Database } from '../coordinator/src/db/schema.js';
import { openStore } from '../coordinator/src/db/store.js';
import { simKey } from './sim-identities.js';

export const DAY_MS = 86_400_000;
export const YEAR_MS = 365 * DAY_MS;
export const NODES = 200;
export const HEAVY_NODES = 20;
export const MODELS = 8;
export const OTHER_USERS = 5_000;
export const HEAVY_SHARE = 0.1;
/** The heavy user's and the heavy owner's wallets (bench keys, never funded anywhere). */
export const HEAVY_USER_KEY = `0x${'11'.repeat(32)}` as const;
export const HEAVY_OWNER_KEY = `0x${'22'.repeat(32)}` as const;
export const HEAVY_USER_ID = 'bench-heavy-user';
/** The master key the benches seal a seeded schema's secrets with (history-scale, network-sim --schema). */
export const BENCH_MASTER_KEY = '42'.repeat(32);

/** The node id of node `i` (lowercase, like the hub's): nodes 0…HEAVY_NODES-1 are the heavy owner's. */
export const nodeIdOf = (i: number) => `0x${(0xbe00 + i).toString(16).padStart(40, '0')}`;

/**
 * The seeded nodes' ids, kept in the schema by its first seed: by default `nodeIdOf(i)`; with
 * `sim`, NODES of the addresses of bench/network-sim.ts's first `sim.nodes` nodes of that seed —
 * the lowest, which are the ones /network lists (its first 200 by id) — so that the simulator's
 * nodes connect to a database where the listed ones carry a year of their own history.
 */
export async function seededNodeIds(
  db: Kysely<Database>,
  sim?: { seed: string; nodes: number },
): Promise<string[]> {
  await sql`create table if not exists bench_node_ids (i int primary key, id text not null)`.execute(db);
  const kept = await sql<{ id: string }>`select id from bench_node_ids order by i`.execute(db);
  if (kept.rows.length === NODES) return kept.rows.map((r) => r.id);
  const ids = sim
    ? Array.from({ length: Math.max(sim.nodes, NODES) }, (_, i) =>
        privateKeyToAddress(simKey(sim.seed, 'node', i)).toLowerCase(),
      )
        .sort()
        .slice(0, NODES)
    : Array.from({ length: NODES }, (_, i) => nodeIdOf(i));
  await sql`insert into bench_node_ids (i, id) select i - 1, (${ids}::text[])[i]
    from generate_series(1, ${NODES}) as i`.execute(db);
  return ids;
}

export type SeedOptions = {
  db: Kysely<Database>;
  /** The nodes' ids are the simulator's (`seededNodeIds`); kept from the first run. */
  sim?: { seed: string; nodes: number };
  /** Total usage rows wanted; the rows missing are added. */
  rows: number;
  /** The year ends here (ms); default: the start of the current UTC hour, kept from the first run. */
  endMs?: number;
  batch?: number;
  log?: (line: string) => void;
};

/** Seeds (or grows) the history to `rows` usage rows. Returns the year's end and the rows added. */
export async function seedHistory(options: SeedOptions): Promise<{ endMs: number; added: number }> {
  const { db } = options;
  const log = options.log ?? (() => {});
  const batch = options.batch ?? 250_000;
  await sql`create table if not exists bench_history (k text primary key, v bigint not null)`.execute(db);
  const kept = await sql<{ v: string }>`select v from bench_history where k = 'end_ms'`.execute(db);
  let endMs = kept.rows[0] ? Number(kept.rows[0].v) : undefined;
  const ids = await seededNodeIds(db, options.sim);
  if (endMs === undefined) {
    endMs = options.endMs ?? Date.now() - (Date.now() % 3_600_000);
    await seedFixed(db, endMs, ids);
    await sql`insert into bench_history (k, v) values ('end_ms', ${endMs}), ('rows', 0)`.execute(db);
    log(`fixed tables seeded; the year ends ${new Date(endMs).toISOString()}`);
  }
  const have = Number(
    (await sql<{ v: string }>`select v from bench_history where k = 'rows'`.execute(db)).rows[0]!.v,
  );
  let added = 0;
  const start = endMs - YEAR_MS;
  // Millions of rows at random places of five B-trees is slow: past REBUILD_ABOVE_ROWS the indexes
  // are dropped and built again after the rows (a sort each), as a bulk load does.
  const rebuild = options.rows - have >= REBUILD_ABOVE_ROWS ? await dropUsageIndexes(db, log) : undefined;
  while (have + added < options.rows) {
    const n = Math.min(batch, options.rows - have - added);
    const first = have + added;
    const t0 = performance.now();
    await db.transaction().execute(async (trx) => {
      await insertUsage(trx, { first, n, start, ids });
      await insertVerifications(trx, { first, n: Math.floor(n / 100), start, ids });
      await sql`update bench_history set v = v + ${n} where k = 'rows'`.execute(trx);
    });
    added += n;
    log(
      `${(have + added).toLocaleString('en')} usage rows (+${n} in ${Math.round(performance.now() - t0)} ms)`,
    );
  }
  await rebuild?.();
  if (added > 0) await sql`analyze`.execute(db);
  return { endMs, added };
}

/** Above this many rows to add, the seeder drops usage_records' indexes and builds them after. */
const REBUILD_ABOVE_ROWS = 500_000;

/** Drops usage_records' indexes (its primary key too); returns what builds them again. */
async function dropUsageIndexes(
  db: Kysely<Database>,
  log: (line: string) => void,
): Promise<() => Promise<void>> {
  const indexes = await sql<{ indexname: string; indexdef: string }>`
    select indexname, indexdef from pg_indexes
    where schemaname = current_schema() and tablename = 'usage_records'`.execute(db);
  const pkey = 'usage_records_pkey';
  for (const { indexname } of indexes.rows) {
    if (indexname === pkey) await sql`alter table usage_records drop constraint ${sql.id(pkey)}`.execute(db);
    else await sql`drop index ${sql.id(indexname)}`.execute(db);
  }
  return async () => {
    const t0 = performance.now();
    await db.transaction().execute(async (trx) => {
      await sql`set local maintenance_work_mem = '512MB'`.execute(trx);
      for (const { indexname, indexdef } of indexes.rows) {
        if (indexname === pkey)
          await sql`alter table usage_records add constraint ${sql.id(pkey)} primary key (id)`.execute(trx);
        else await sql.raw(indexdef).execute(trx);
      }
    });
    log(
      `usage_records' ${indexes.rows.length} indexes built again in ${Math.round(performance.now() - t0)} ms`,
    );
  };
}

/**
 * `n` usage rows numbered from `first`, at random times of the year. Ids are time-ordered like
 * db/ids.ts (the creation ms in hex, then random hex), `day` the UTC date of `created_at`.
 */
async function insertUsage(
  db: Kysely<Database>,
  p: { first: number; n: number; start: number; ids: string[] },
) {
  await sql`
    with g as (
      select i, random() as r1, random() as r2, random() as r3, random() as r4,
             ${p.start}::bigint + floor(random() * ${YEAR_MS})::bigint as ts,
             md5(i::text || random()::text) as h
      from generate_series(${p.first}::bigint, ${p.first + p.n - 1}::bigint) as i
    ), r as (
      select i, r1, r2, r3, r4, ts, h,
        case when r1 < ${HEAVY_SHARE} then floor(r2 * ${HEAVY_NODES})::int
             else ${HEAVY_NODES} + floor(r2 * ${NODES - HEAVY_NODES})::int end as node,
        (i % 2)::int as second
      from g
    )
    insert into usage_records (id, request_id, user_id, key_id, model, node_id, kind, prompt_tokens,
      completion_tokens, cost_nano, provider_nano, fee_nano, status, created_at, day, latency_ms,
      finish_reason, ttft_ms)
    select
      substr(lpad(to_hex(ts), 12, '0'), 1, 8) || '-' || substr(lpad(to_hex(ts), 12, '0'), 9, 4)
        || '-7' || substr(h, 1, 3) || '-8' || substr(h, 4, 3) || '-' || substr(h, 7, 12),
      'chatcmpl-bench-' || i,
      case when r3 < ${HEAVY_SHARE} then ${HEAVY_USER_ID} else 'bench-user-' || (i % ${OTHER_USERS}) end,
      case when r3 < ${HEAVY_SHARE} then 'bench-key-' || (i % 3) else null end,
      'bench-model-' || ((node + second * 3) % ${MODELS}),
      (${p.ids}::text[])[node + 1],
      case when r4 < 0.9 then 'chat' when r4 < 0.97 then 'embedding' else 'completion' end,
      pt, ct, (pt * 100 + ct * 300) * 11 / 10, pt * 100 + ct * 300, (pt * 100 + ct * 300) / 10,
      case when r4 * 100 - floor(r4 * 100) < 0.97 then 'completed'
           when r4 * 100 - floor(r4 * 100) < 0.99 then 'node_failed' else 'client_disconnected' end,
      ts,
      to_char(to_timestamp(ts / 1000.0) at time zone 'UTC', 'YYYY-MM-DD'),
      200 + (i % 5000), 'stop', 50 + (i % 400)
    from (select r.*, 50 + (i * 7919 % 2000) as pt, (i * 104729 % 1000) as ct from r) as r
  `.execute(db);
}

/** One verification per 100 requests: a random node and time, 2 % failed. */
async function insertVerifications(
  db: Kysely<Database>,
  p: { first: number; n: number; start: number; ids: string[] },
) {
  if (p.n <= 0) return;
  await sql`
    insert into verifications (id, node_id, verifier_id, model, sha256, job_id, verify_job_id, tokens,
      mean_logprob_e4, top_k_e4, passed, source, evidence_e4, failure, created_at)
    select 'bench-v-' || ${p.first} || '-' || i, (${p.ids}::text[])[(i % ${NODES})::int + 1],
      'bench-verifier', 'bench-model-' || (i % ${MODELS}), md5(i::text), 'job-' || i, 'vjob-' || i, 64,
      -12000, 9000, case when i % 50 = 0 then 0 else 1 end, 'spot',
      case when i % 50 = 0 then 30000 else -2000 end, null,
      ${p.start}::bigint + floor(random() * ${YEAR_MS})::bigint
    from generate_series(1, ${p.n}) as i
  `.execute(db);
}

/** What does not grow with requests: users, keys, nodes and their owners, sessions, misses, payouts. */
async function seedFixed(db: Kysely<Database>, endMs: number, ids: string[]) {
  const start = endMs - YEAR_MS;
  const heavyUser = getAddress(privateKeyToAccount(HEAVY_USER_KEY).address);
  const heavyOwner = privateKeyToAccount(HEAVY_OWNER_KEY).address.toLowerCase();
  await db.transaction().execute(async (trx) => {
    await sql`insert into users (id, address, created_at) values (${HEAVY_USER_ID}, ${heavyUser}, ${start})`.execute(
      trx,
    );
    await sql`
      insert into users (id, address, created_at)
      select 'bench-user-' || i, '0x' || lpad(to_hex(i + 1), 40, '0'), ${start}
      from generate_series(0, ${OTHER_USERS - 1}) as i`.execute(trx);
    await sql`
      insert into api_keys (id, user_id, name, prefix, secret_hash, status, created_at, spend_nano)
      select 'bench-key-' || i, ${HEAVY_USER_ID}, 'key ' || i, 'sk-bench' || i, md5('bench-key-' || i),
        'active', ${start}, 0
      from generate_series(0, 2) as i`.execute(trx);
    // The heavy owner owns nodes 0…19; the other 180 nodes belong to 60 owners, 3 each.
    await sql`
      insert into node_owners (node_id, owner, linked_at)
      select (${ids}::text[])[i + 1],
        case when i < ${HEAVY_NODES} then ${heavyOwner} else '0x' || lpad(to_hex(${0xa000} + i / 3), 40, '0') end,
        ${start}
      from generate_series(0, ${NODES - 1}) as i`.execute(trx);
    await sql`
      insert into node_sessions (id, node_id, replica, started_at, last_seen_at, ended_at)
      select 'bench-s-' || n || '-' || d, (${ids}::text[])[n + 1], 'bench-replica',
        ${start}::bigint + d * ${DAY_MS}::bigint, ${start}::bigint + d * ${DAY_MS}::bigint + ${DAY_MS - 600_000},
        ${start}::bigint + d * ${DAY_MS}::bigint + ${DAY_MS - 600_000}
      from generate_series(0, ${NODES - 1}) as n, generate_series(0, 364) as d`.execute(trx);
    await sql`
      insert into node_misses (node_id, day, misses)
      select (${ids}::text[])[n + 1],
        to_char(to_timestamp((${start}::bigint + d * ${DAY_MS}::bigint) / 1000.0) at time zone 'UTC', 'YYYY-MM-DD'),
        (n + d) % 4
      from generate_series(0, ${NODES - 1}) as n, generate_series(0, 364) as d`.execute(trx);
    await sql`
      insert into node_trust (node_id, passed, failed, status, reason, evidence_e4, updated_at)
      select (${ids}::text[])[n + 1], 1000, 20, 'trusted', null, 0, ${endMs}
      from generate_series(0, ${NODES - 1}) as n`.execute(trx);
    await sql`
      insert into provider_payouts (id, owner, idempotency_key, token, amount, usd_nano, to_address, status,
        tx_hash, raw_tx, error_code, created_at, updated_at)
      select 'bench-p-' || o || '-' || w, owner, 'bench-' || o || '-' || w, 'USDC.s', '1000000', 1000000000,
        owner, 'paid', '0x' || md5(o || '-' || w) || md5(w || '-' || o), null, null,
        ${start}::bigint + w * 7 * ${DAY_MS}::bigint, ${start}::bigint + w * 7 * ${DAY_MS}::bigint
      from (select distinct owner, dense_rank() over (order by owner) as o from node_owners) as owners,
        generate_series(0, 51) as w`.execute(trx);
  });
}

const isMain = import.meta.url === `file://${process.argv[1]}`;
if (isMain) {
  const { values } = parseArgs({
    options: {
      rows: { type: 'string', default: '10000000' },
      pg: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/test' },
      schema: { type: 'string', default: 'history_bench' },
      batch: { type: 'string', default: '250000' },
      /** The nodes are 200 of bench/network-sim.ts's of this seed (its --seed; default 'a')… */
      'sim-seed': { type: 'string' },
      /** …the 200 it lists of its first --sim-nodes (its --sizes). */
      'sim-nodes': { type: 'string', default: '10000' },
    },
  });
  const admin = openStore({ pgUrl: values.pg });
  await sql`create schema if not exists ${sql.id(values.schema)}`.execute(admin.db);
  await admin.close();
  const store = openStore({ pgUrl: values.pg, schema: values.schema });
  await migrate(store.db);
  const t0 = performance.now();
  const { added } = await seedHistory({
    db: store.db,
    rows: Number(values.rows),
    batch: Number(values.batch),
    sim: values['sim-seed'] ? { seed: values['sim-seed'], nodes: Number(values['sim-nodes']) } : undefined,
    log: (line) => console.log(line),
  });
  console.log(
    `added ${added.toLocaleString('en')} usage rows in ${Math.round((performance.now() - t0) / 1000)} s`,
  );
  await store.close();
}
