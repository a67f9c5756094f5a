/**
 * A dead replica takes nothing with it: replica A runs as a process of its own (the real
 * `gpumesh-coordinator` command), replica B in this process, both on one PostgreSQL schema and one
 * Redis namespace. A node given both hub URLs connects to A; a paid stream through A is under way
 * when A is killed with SIGKILL. The node moves to B at once (its next reconnect tries the next
 * URL) and serves through B; B releases the hold A left within seconds (A's lease runs out); the
 * interrupted request is not billed, the one B served is billed once, and the books add up.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type NodeDaemon, startNodeDaemon, usdOffer } from '@gpumesh/node/testing';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildApp } from '../coordinator/src/app.js';
import { loadConfig } from '../coordinator/src/config.js';
import { migrate } from '../coordinator/src/db/migrate.js';
import { openStore, type Store } from '../coordinator/src/db/store.js';
import { HUB_PATH } from '../coordinator/src/hub/hub-plugin.js';
import { credit } from '../coordinator/src/ledger/credit.js';
import { REPLICA_LEASE_MS } from '../coordinator/src/ledger/replica-leases.js';
import { expectBooksBalanced } from '../coordinator/src/testing/expect-books-balanced.js';
import { signIn } from '../coordinator/src/testing/sign-in.js';
import { sumOfEntries } from '../coordinator/src/testing/sum-of-entries.js';
import { until } from '../coordinator/src/testing/until.js';
import { createTestSchema, testPgUrl, testRedisUrl } from './support/services.js';

const USD = 1_000_000_000n;
const ANNOUNCE_MS = 100;
const pgUrl = testPgUrl();
const redisUrl = testRedisUrl();
const coordinatorBin = path.resolve(import.meta.dirname, '../coordinator/bin/gpumesh-coordinator.js');

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

describe.skipIf(!pgUrl || !redisUrl)('replica failover (PostgreSQL + Redis, A killed with SIGKILL)', () => {
  const masterKey = randomBytes(32).toString('hex');
  const namespace = `gmtest-${randomBytes(6).toString('hex')}`;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'gm-failover-'));
  let schema: { schema: string; drop(): Promise<void> };
  let storeB: Store;
  let appB: Awaited<ReturnType<typeof buildApp>>;
  let processA: ChildProcess;
  let baseA: string;
  let baseB: string;
  let key: string;
  let userId: string;
  let node: NodeDaemon | undefined;

  beforeAll(async () => {
    schema = await createTestSchema(pgUrl!, 'failover');
    storeB = openStore({ pgUrl: pgUrl!, schema: schema.schema });
    await migrate(storeB.db);
    const shared = {
      databaseUrl: pgUrl,
      databaseSchema: schema.schema,
      redisUrl,
      masterKey,
      logLevel: 'silent',
      rateLimit: { enabled: false },
    };
    // A: the real command, in a process of its own (so SIGKILL is a real crash).
    const portA = await freePort();
    baseA = `http://127.0.0.1:${portA}`;
    processA = spawn(
      process.execPath,
      [
        coordinatorBin,
        `--port=${portA}`,
        '--host=127.0.0.1',
        `--data-dir=${dataDir}`,
        '--peer-port=0',
        `--peer-announce-ms=${ANNOUNCE_MS}`,
        `--peer-namespace=${namespace}`,
        '--log-level=silent',
        '--rate-limit-enabled=false',
      ],
      {
        env: {
          ...process.env,
          DATABASE_URL: pgUrl,
          REDIS_URL: redisUrl,
          GPUMESH_DATABASE_SCHEMA: schema.schema,
          GPUMESH_MASTER_KEY: masterKey,
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let stderr = '';
    processA.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const config = loadConfig({
      overrides: { ...shared, dataDir, peer: { port: 0, announceMs: ANNOUNCE_MS, namespace } },
    });
    appB = await buildApp({ config, store: storeB, logger: false });
    await appB.listen({ port: 0, host: '127.0.0.1' });
    baseB = `http://127.0.0.1:${(appB.server.address() as { port: number }).port}`;
    await until(async () => {
      if (processA.exitCode !== null) throw new Error(`replica A exited: ${stderr}`);
      return (await fetch(`${baseA}/healthz`).catch(() => undefined))?.ok === true;
    }, 60_000);
    const jwt = await signIn(appB, privateKeyToAccount(generatePrivateKey()));
    const auth = { authorization: `Bearer ${jwt}` };
    userId = (
      (await appB.inject({ method: 'GET', url: '/api/user', headers: auth })).json() as { id: string }
    ).id;
    key = (
      (
        await appB.inject({ method: 'POST', url: '/api/router/keys', headers: auth, payload: { name: 'f' } })
      ).json() as { key: string }
    ).key;
    await credit(storeB.db, { userId, amountNano: 10n * USD, ref: 'failover-seed' });
  }, 120_000);

  afterAll(async () => {
    node?.kill();
    processA?.kill('SIGKILL');
    await appB?.close();
    if (storeB) await expectBooksBalanced({ db: storeB.db, ledger: appB.ctx.ledger });
    await storeB?.close();
    await schema?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const chat = (base: string, stream: boolean) =>
    fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }], stream }),
    });

  test('behavior: kill -9 of the nodes’ replica: they serve through B at once, B releases A’s holds within seconds; billed once', async () => {
    const hubA = `${baseA.replace('http', 'ws')}${HUB_PATH}`;
    const hubB = `${baseB.replace('http', 'ws')}${HUB_PATH}`;
    node = await startNodeDaemon({
      url: `${hubA},${hubB}`,
      models: [usdOffer('m', USD, 2n * USD)],
      promptTokens: 11,
      replyTokens: ['one', ' two', ' three', ' four', ' five', ' six'],
      chunkDelayMs: 250,
    });
    // On A, and B knows it through A's announcements.
    await until(() => appB.hub.index.node(node!.nodeId)?.via !== undefined, 20_000);
    const before = await appB.ctx.ledger.balance(userId);

    // A paid stream through A, under way (its first token arrived) when A dies.
    const interrupted = await chat(baseA, true);
    expect(interrupted.status).toBe(200);
    const reader = interrupted.body!.getReader();
    await reader.read();
    await until(async () => (await appB.ctx.ledger.balance(userId)).reservedNano > 0n, 5_000);
    const killedAt = performance.now();
    processA.kill('SIGKILL');
    await reader.read().catch(() => undefined);

    // The node moves to B (its next URL) and serves through it, well within the heartbeat timeout.
    await until(() => appB.hub.session(node!.nodeId) !== undefined, 20_000);
    const served = await chat(baseB, false);
    const body = (await served.json()) as {
      usage: { cost: number };
      choices: { message: { content: string } }[];
    };
    expect(served.status).toBe(200);
    expect(body.choices[0]!.message.content).toBe('one two three four five six');
    const movedMs = performance.now() - killedAt;
    expect(movedMs).toBeLessThan(10_000);

    // A's hold is released by B once A's lease runs out (6 s) and B's next sweep (2 s) sees it.
    await until(async () => (await appB.ctx.ledger.balance(userId)).reservedNano === 0n, 15_000);
    const releasedMs = performance.now() - killedAt;
    expect(releasedMs).toBeLessThan(REPLICA_LEASE_MS + 4_000);

    // Billed once: the request B served; the interrupted one, never settled by A, costs nothing.
    await appB.ctx.ledger.idle();
    const after = await appB.ctx.ledger.balance(userId);
    expect(before.balanceNano - after.balanceNano).toBe(BigInt(Math.round(body.usage.cost * 1e9)));
    const rows = await storeB.db
      .selectFrom('usage_records')
      .select(['node_id'])
      .where('user_id', '=', userId)
      .execute();
    expect(rows.map((r) => r.node_id)).toEqual([node.nodeId]);
    expect(await sumOfEntries(storeB.db, userId)).toBe(after.balanceNano);
    console.log(
      `replica failover: served through B ${Math.round(movedMs)} ms after SIGKILL; A's hold released after ${Math.round(releasedMs)} ms`,
    );
  }, 90_000);
});
