/**
 * One coordinator replica in a process of its own (bench/replica-relay.ts, bench/network-sim.ts),
 * as replicas run on machines of their own: PostgreSQL schema and Redis shared, peer-RPC on a free
 * port (or, with `peer: false`, a lone coordinator on PostgreSQL).
 *
 * Run: node --conditions=gpumesh-source --import tsx bench/replica-process.ts '<json>' with {pgUrl, schema, redisUrl,
 * masterKey, namespace, announceMs}. Prints one JSON line with `ready`, its base URL, hub URL and
 * peer-RPC address; SIGTERM closes it. Started with an IPC channel, it answers `{cmd: 'pick'}`
 * (the pick timed over its live index, replica-probe.ts) and `{cmd: 'memory'}` (after a full GC
 * when run with --expose-gc).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildApp } from '../coordinator/src/app.js';
import { loadConfig } from '../coordinator/src/config.js';
import { openStore } from '../coordinator/src/db/store.js';
import { HUB_PATH } from '../coordinator/src/hub/hub-plugin.js';
import { answerProbes } from './replica-probe.js';

export type ReplicaSettings = {
  /** Writes a V8 CPU profile of this replica's main thread here when it stops. */
  cpuProfile?: string;
  pgUrl: string;
  schema: string;
  redisUrl: string;
  masterKey: string;
  namespace: string;
  announceMs: number;
  /** false: no peer-RPC, no announcements (one coordinator alone). Default true. */
  peer?: boolean;
  /** The model catalog (coordinator `catalogFile`). */
  catalogFile?: string;
  /** trust.canaryIntervalMs; 0 turns canaries off. */
  canaryIntervalMs?: number;
};

const settings = JSON.parse(process.argv[2]!) as ReplicaSettings;
const profiler = settings.cpuProfile ? new Session() : undefined;
const post = (method: string) =>
  new Promise<unknown>((resolve, reject) =>
    profiler!.post(method, (error, result) => (error ? reject(error) : resolve(result))),
  );
if (profiler) {
  profiler.connect();
  await post('Profiler.enable');
  await post('Profiler.start');
}
const dataDir = mkdtempSync(path.join(tmpdir(), 'gm-replica-'));
const store = openStore({ pgUrl: settings.pgUrl, schema: settings.schema });
const config = loadConfig({
  overrides: {
    dataDir,
    databaseUrl: settings.pgUrl,
    databaseSchema: settings.schema,
    redisUrl: settings.redisUrl,
    masterKey: settings.masterKey,
    logLevel: 'silent',
    rateLimit: { enabled: false },
    ...(settings.peer === false
      ? {}
      : { peer: { port: 0, announceMs: settings.announceMs, namespace: settings.namespace } }),
    ...(settings.catalogFile ? { catalogFile: settings.catalogFile } : {}),
    ...(settings.canaryIntervalMs === undefined
      ? {}
      : { trust: { canaryIntervalMs: settings.canaryIntervalMs } }),
  },
});
const app = await buildApp({ config, store, logger: false, tierOf: async () => 'platinum' });
await app.listen({ port: 0, host: '127.0.0.1' });
const port = (app.server.address() as AddressInfo).port;
console.log(
  JSON.stringify({
    ready: true,
    base: `http://127.0.0.1:${port}`,
    hubUrl: `ws://127.0.0.1:${port}${HUB_PATH}`,
    peerUrl: app.peerUrl,
  }),
);
if (process.send) answerProbes(app);
process.on(
  'SIGTERM',
  () =>
    void (async () => {
      if (profiler) {
        const { profile } = (await post('Profiler.stop')) as { profile: unknown };
        writeFileSync(settings.cpuProfile!, JSON.stringify(profile));
      }
      await app.close();
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
      process.exit(0);
    })(),
);
