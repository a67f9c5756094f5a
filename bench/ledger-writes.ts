/**
 * The ledger of record alone: what a paid request's money costs the coordinator's CPU (all threads),
 * with no HTTP, node or router around it. Each request is a hold then its settlement with a usage
 * row, as billing.ts does; `--concurrency` requests in flight at once, so group commits fill as they
 * do under load. The SQLite ledger on a file writes in its writer thread (ledger/writer.ts).
 *
 * Run: node --conditions=gpumesh-source --import tsx bench/ledger-writes.ts [--requests 20000] [--concurrency 32]
 *   [--pg postgres://…]  the PostgreSQL ledger instead (a schema of its own, dropped after)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { migrate } from '../coordinator/src/db/migrate.js';
import { openStore } from '../coordinator/src/db/store.js';
import { providerAccountId } from '../coordinator/src/db/tables/ledger.js';
import { USAGE_STATUS } from '../coordinator/src/db/tables/usage.js';
import { Ledger } from '../coordinator/src/ledger/ledger.js';
import { readThreads, usedBetween } from './thread-times.js';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '20000' },
    concurrency: { type: 'string', default: '32' },
    pg: { type: 'string' },
  },
});
const REQUESTS = Number(values.requests);
const CONCURRENCY = Number(values.concurrency);
const USERS = 16;

const dir = mkdtempSync(path.join(tmpdir(), 'gm-ledger-bench-'));
const schema = `ledger_bench_${process.pid}`;
if (values.pg) {
  const admin = openStore({ pgUrl: values.pg });
  await sql`create schema ${sql.id(schema)}`.execute(admin.db);
  await admin.close();
}
const store = openStore(
  values.pg ? { pgUrl: values.pg, schema } : { sqlitePath: path.join(dir, 'gpumesh.db') },
);
await migrate(store.db);
const ledger = new Ledger(store);
for (let u = 0; u < USERS; u++) {
  await ledger.credit({ userId: `user-${u}`, amountNano: 10n ** 15n, ref: `seed-${u}` });
}

let next = 0;
async function client(): Promise<void> {
  while (next < REQUESTS) {
    const i = next++;
    const userId = `user-${i % USERS}`;
    const hold = await ledger.reserve({ userId, amountNano: 2_000n });
    if (!hold.ok) throw new Error('the seed covers every hold');
    await ledger.settle({
      reservationId: hold.reservationId,
      providerNano: 900n,
      feeNano: 100n,
      providerAccountId: providerAccountId(`0x${(i % 8).toString(16).padStart(40, '0')}`),
      usage: {
        requestId: `req-${i}`,
        userId,
        keyId: null,
        model: 'bench-model',
        nodeId: `0x${(i % 8).toString(16).padStart(40, '0')}`,
        kind: 'chat',
        promptTokens: 12,
        completionTokens: 8,
        status: USAGE_STATUS.completed,
        now: Date.now(),
        latencyMs: 3,
        ttftMs: 1,
        finishReason: 'stop',
      },
    });
  }
}

const before = readThreads(process.pid);
const started = performance.now();
await Promise.all(Array.from({ length: CONCURRENCY }, client));
await ledger.idle();
const seconds = (performance.now() - started) / 1000;
const after = readThreads(process.pid);
const { transactions, operations } = ledger.stats;
await ledger.close();
if (values.pg) await store.db.schema.dropSchema(schema).cascade().execute();
await store.close();
rmSync(dir, { recursive: true, force: true });

console.log(
  `ledger: ${REQUESTS} paid requests, ${CONCURRENCY} in flight, ${values.pg ? 'PostgreSQL' : 'SQLite'}`,
);
console.log(
  `  ${Math.round(REQUESTS / seconds)} requests/s; ${(operations / transactions).toFixed(1)} operations per commit`,
);
if (before && after) {
  const used = usedBetween(process.pid, before, after);
  const us = (ns: number) => Math.round(ns / 1000 / REQUESTS);
  console.log(`  CPU per request: main thread ${us(used.main)} µs, other threads ${us(used.others)} µs`);
}
