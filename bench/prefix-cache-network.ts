/**
 * One network of bench/prefix-cache.ts: a coordinator (the real app on a SQLite file, prefix
 * affinity on or off) and three real node daemons (`gpumesh-node start`, child processes,
 * node-llama-cpp on the CPU, one thread each) serving npm start's mini-chat file at the same,
 * default prices. What each node claimed in its results' usage (the tokens it read from its KV
 * cache) is noted as results come back, beside what the coordinator billed.
 */
import { linkSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadNodeIdentity } from '@gpumesh/node';
import { type SpawnedNodeDaemon, spawnNodeDaemon } from '@gpumesh/node/testing';
import { signOwnerProof } from '@gpumesh/protocol';
import type { FastifyInstance } from 'fastify';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { buildApp } from '../coordinator/src/app.js';
import { loadConfig } from '../coordinator/src/config.js';
import { migrate } from '../coordinator/src/db/migrate.js';
import { openStore, type Store } from '../coordinator/src/db/store.js';
import { HUB_PATH } from '../coordinator/src/hub/hub-plugin.js';
import { credit } from '../coordinator/src/ledger/credit.js';
import type { JobHandlers, JobSpec } from '../coordinator/src/router/jobs.js';
import type { Slot } from '../coordinator/src/router/router.js';
import { signIn } from '../coordinator/src/testing/sign-in.js';

/** The file npm start's nodes serve (scripts/mini-chat-model.ts: MINI_CHAT_QUANT). */
const MINI_CHAT_FILE = path.resolve(import.meta.dirname, '../models/mini-chat/gpumesh-mini-chat-F16.gguf');
/** The id clients ask for: the catalog's, which the file's pinned hash maps to. */
export const MINI_CHAT_ID = 'gpumesh/mini-chat';
/** The context npm start serves it with: the catalog's (scripts/mini-chat-model.ts), 8,192 tokens. */
const MINI_CHAT_CONTEXT = (
  JSON.parse(
    readFileSync(path.resolve(import.meta.dirname, '../coordinator/src/catalog/models.json'), 'utf8'),
  ) as { models: { id: string; contextLength: number }[] }
).models.find((m) => m.id === MINI_CHAT_ID)!.contextLength;
const USD = 1_000_000_000n;
/** The node key's file in a node's state folder (scripts/start-local-node.ts names it too). */
const NODE_KEY_FILE = 'node.key';

export type BenchNetwork = {
  affinity: boolean;
  app: FastifyInstance;
  store: Store;
  /** http://127.0.0.1:<port>/v1 */
  baseURL: string;
  apiKey: string;
  /** The node ids, in the order they came online. */
  nodeIds: string[];
  /** By the content of a request's last message (unique per turn): the node's claimed cached tokens. */
  claimed: Map<string, number>;
  close(): Promise<void>;
};

export type NetworkOptions = {
  affinity: boolean;
  nodes: number;
  threads: number;
  /** Jobs at once per node (sequences its jobs run on; the prefix cache keeps up to 4 more). */
  concurrency: number;
  /** Each daemon's --prefix-cache-bytes; unset: the daemon's default. */
  prefixCacheBytes?: number;
};

/** Starts the coordinator and its daemons; resolves once every daemon's mini-chat offer is routable. */
export async function startBenchNetwork(options: NetworkOptions): Promise<BenchNetwork> {
  const dir = mkdtempSync(path.join(tmpdir(), `gm-prefix-bench-${options.affinity ? 'on' : 'off'}-`));
  const store = openStore({ sqlitePath: path.join(dir, 'gpumesh.db') });
  await migrate(store.db);
  const config = loadConfig({
    overrides: {
      dataDir: dir,
      logLevel: 'silent',
      rateLimit: { enabled: false },
      // A first-token deadline past any prefill here: on this shared 2-core machine a 2,000-token
      // prefill can take longer than the default (5 s + 1 ms a token), and a failover would prefill
      // it again elsewhere — on both sides alike, hiding what the cache changes.
      router: { prefixAffinity: options.affinity, ttftMs: 120_000 },
      // Canaries and spot checks would add jobs of their own to the nodes' traffic: the workload only.
      trust: { canaryIntervalMs: 0, spotCheckRate: 0 },
    },
  });
  const app = await buildApp({ config, store, logger: false, tierOf: async () => 'platinum' });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const jwt = await signIn(app, privateKeyToAccount(generatePrivateKey()));
  const auth = { authorization: `Bearer ${jwt}` };
  const created = await app.inject({
    method: 'POST',
    url: '/api/router/keys',
    headers: auth,
    payload: { name: 'prefix-bench' },
  });
  const { key } = created.json() as { key: string };
  const user = (await app.inject({ method: 'GET', url: '/api/user', headers: auth })).json() as {
    id: string;
  };
  await credit(store.db, { userId: user.id, amountNano: 1_000n * USD, ref: 'prefix-bench' });

  const claimed = new Map<string, number>();
  tapClaims(app, claimed);

  // Owned nodes, as an operator runs them: a node without an owner has tier none, one job at a time.
  const owner = privateKeyToAccount(generatePrivateKey());
  const daemons: SpawnedNodeDaemon[] = [];
  for (let i = 0; i < options.nodes; i++) {
    const home = path.join(dir, `node-${i}`);
    mkdirSync(path.join(home, 'models'), { recursive: true });
    linkSync(MINI_CHAT_FILE, path.join(home, 'models', path.basename(MINI_CHAT_FILE)));
    const config = path.join(home, 'config.json');
    writeFileSync(
      config,
      JSON.stringify({
        models: [
          {
            file: path.basename(MINI_CHAT_FILE),
            id: path.basename(MINI_CHAT_FILE, '.gguf'),
            contextLength: MINI_CHAT_CONTEXT,
          },
        ],
      }),
    );
    const { nodeId } = await loadNodeIdentity(path.join(home, 'state', NODE_KEY_FILE));
    const proof = await signOwnerProof(nodeId, owner);
    daemons.push(
      spawnNodeDaemon({
        coordinator: `${base.replace('http', 'ws')}${HUB_PATH}`,
        dir: home,
        args: [
          '--config',
          config,
          '--owner-address',
          proof.address,
          '--owner-signature',
          proof.signature,
          '--threads',
          String(options.threads),
          '--max-concurrency',
          String(options.concurrency),
          ...(options.prefixCacheBytes !== undefined
            ? ['--prefix-cache-bytes', String(options.prefixCacheBytes)]
            : []),
        ],
      }),
    );
  }
  const close = async () => {
    for (const daemon of daemons) await daemon.stop();
    await app.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const nodeIds = await onlineNodes(app, options.nodes, daemons);
    return {
      affinity: options.affinity,
      app,
      store,
      baseURL: `${base}/v1`,
      apiKey: key,
      nodeIds,
      claimed,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** Waits (on the index, polled) until `count` nodes offer mini-chat at one price; their ids. */
async function onlineNodes(
  app: FastifyInstance,
  count: number,
  daemons: readonly SpawnedNodeDaemon[],
): Promise<string[]> {
  const deadline = Date.now() + 180_000;
  for (;;) {
    const offers = app.hub.index.offers(MINI_CHAT_ID);
    if (offers && offers.size >= count) {
      const entries = [...offers.values()];
      const prices = new Set(entries.map((e) => `${e.priceInNano}/${e.priceCachedInNano}/${e.priceOutNano}`));
      if (prices.size !== 1) throw new Error(`the nodes' prices differ: ${[...prices].join(', ')}`);
      return entries.map((e) => e.node.nodeId.toLowerCase());
    }
    const dead = daemons.find((d) => d.process.exitCode !== null);
    if (dead) throw new Error(`a node daemon exited:\n${dead.stderr()}`);
    if (Date.now() > deadline) throw new Error(`the ${count} nodes did not come online in 180 s`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * Notes each result's claimed cached tokens (the node's usage, before the coordinator bounds it)
 * under the content of the job's last message (the workload makes each turn's unique), by wrapping
 * the router's dispatch: the prompt tokens a node prefilled are its prompt less this claim.
 */
function tapClaims(app: FastifyInstance, claimed: Map<string, number>): void {
  const dispatch = app.router.dispatch.bind(app.router);
  app.router.dispatch = (slot: Slot, spec: JobSpec, handlers: JobHandlers) => {
    const messages = spec.request.messages as { content?: unknown }[] | undefined;
    const last = messages?.at(-1)?.content;
    return dispatch(slot, spec, {
      ...handlers,
      onResult: (response, tokenIds) => {
        const usage = response.usage as { prompt_tokens_details?: { cached_tokens?: number } } | undefined;
        if (typeof last === 'string') claimed.set(last, usage?.prompt_tokens_details?.cached_tokens ?? 0);
        handlers.onResult(response, tokenIds);
      },
    });
  };
}
