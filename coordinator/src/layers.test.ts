/**
 * The layers of coordinator/src, lowest first; a file may import its own layer and those below,
 * never one above (type-only imports, re-exports and dynamic imports included; the graph is
 * testing/import-graph.ts's, the same as import-cycles.test.ts's):
 *
 *   base      root-level helpers: clock, config (config-schema.ts: every default, naming no
 *             capability), errors, request-id, security-headers, exceeds-json-depth. A new root
 *             file lands here unless listed below, the strictest place.
 *   db        the store, every table type (db/tables/) and migration.
 *   ledger, chain, pricing   money and on-chain transfers, on the store; and what a request
 *             costs (pricing/: every price, the usage a node may bill), which the ledger's cap
 *             of a charge reads and the router's hold and bill call.
 *   hub, router     nodes and where a job goes; they take what they are told about nodes (owners,
 *             standings, tiers, missed jobs, per-key limits, probation, spot checks, metrics) as
 *             callbacks and small interfaces of their own (router/types.ts), never a capability.
 *   features  every other folder (auth, keys, wallets, staking, topup, tx, withdraw, provider,
 *             trust, usage, users, v1, pages, catalog, discovery, metrics, peer, reconcile), which
 *             may import each other; and app-context.ts, the features' context: it names
 *             features' objects (Catalog, AcceptedKeys, Keyring) and the chain routes' options,
 *             so it sits with the features that take it. Nothing below features takes it: the
 *             hub gets its own options, the chain its config and db.
 *   app       the composition root: app.ts (buildApp), compose/ (its steps: what is built,
 *             started and wired to what), server.ts and index.ts.
 *   testing   test support, above everything.
 *
 * @gpumesh/protocol sits below them all: a package, so a leaf here, and it cannot import the
 * coordinator back. An upward import fails the test unless it is listed in EXCEPTIONS with its
 * reason; a listed one that no longer occurs fails too, so the list only shrinks.
 *
 * Within a layer, two folders never import each other (hub and router, provider and trust did): a
 * folder that needs another's types and is needed back is one capability split by file count, or
 * a type in the wrong folder. The same holds for the folders within a folder (trust/canaries,
 * checks, standing and slashing: each phase imports only those after it).
 */
import path from 'node:path';
import { expect, test } from 'vitest';
import { importGraph } from './testing/import-graph.js';

const ROOT = import.meta.dirname;

const LAYER_NAMES = [
  'base',
  'db',
  'ledger, chain, pricing',
  'hub, router',
  'features',
  'app',
  'testing',
] as const;
const FOLDER_LAYER: Readonly<Record<string, number>> = {
  db: 1,
  ledger: 2,
  chain: 2,
  pricing: 2,
  hub: 3,
  router: 3,
  compose: 5,
  testing: 6,
};
const ROOT_FILE_LAYER: Readonly<Record<string, number>> = {
  'app-context.ts': 4,
  'app.ts': 5,
  'server.ts': 5,
  'index.ts': 5,
};

/** An upward import allowed for now, and why (at most 5). */
type Exception = { from: string; to: string; reason: string };

const EXCEPTIONS: readonly Exception[] = [];

/** A file's layer, from its path relative to coordinator/src. */
function layerOf(file: string): number {
  const [first, ...rest] = file.split('/');
  if (rest.length === 0) return ROOT_FILE_LAYER[first!] ?? 0;
  return FOLDER_LAYER[first!] ?? 4;
}

/** Every import of a file from a layer above its own, as `from -> to` (paths relative to `root`). */
function upwardImports(graph: Map<string, string[]>, root: string): string[] {
  const found: string[] = [];
  for (const [file, deps] of graph) {
    const from = path.relative(root, file);
    for (const dep of deps) {
      const to = path.relative(root, dep);
      if (layerOf(to) > layerOf(from)) found.push(`${from} -> ${to}`);
    }
  }
  return found.sort();
}

test('default: no import reaches a layer above, but the listed exceptions', () => {
  const graph = importGraph(ROOT);
  expect(graph.size).toBeGreaterThan(100);
  expect(EXCEPTIONS.length).toBeLessThanOrEqual(5);
  for (const exception of EXCEPTIONS) expect(exception.reason.length).toBeGreaterThan(20);
  const listed = EXCEPTIONS.map((e) => `${e.from} -> ${e.to}`).sort();
  const upward = upwardImports(graph, ROOT);
  expect(upward.filter((edge) => !listed.includes(edge))).toEqual([]);
  // A fixed exception leaves the list.
  expect(listed.filter((edge) => !upward.includes(edge))).toEqual([]);
});

/**
 * Every pair of sibling folders that import each other, as `a <-> b`: folders of coordinator/src,
 * and folders within one (`trust/checks <-> trust/standing`).
 */
function folderCycles(graph: Map<string, string[]>, root: string): string[] {
  const edges = new Set<string>();
  for (const [file, deps] of graph) {
    const from = path.relative(root, file).split('/');
    for (const dep of deps) {
      const to = path.relative(root, dep).split('/');
      // Where the two paths part, when each goes on into a folder there: those two folders.
      let i = 0;
      while (i < from.length - 1 && i < to.length - 1 && from[i] === to[i]) i++;
      if (i < from.length - 1 && i < to.length - 1) {
        edges.add(`${from.slice(0, i + 1).join('/')} -> ${to.slice(0, i + 1).join('/')}`);
      }
    }
  }
  const cycles = new Set<string>();
  for (const edge of edges) {
    const [a, b] = edge.split(' -> ') as [string, string];
    if (edges.has(`${b} -> ${a}`)) cycles.add(a < b ? `${a} <-> ${b}` : `${b} <-> ${a}`);
  }
  return [...cycles].sort();
}

test('default: no two folders import each other', () => {
  expect(folderCycles(importGraph(ROOT), ROOT)).toEqual([]);
});

test('behavior: two folders importing each other are caught, one way is not, within a folder too', () => {
  const at = (file: string) => path.join('/src', file);
  const graph = new Map([
    [at('hub/hub.ts'), [at('router/pick-index.ts'), at('db/schema.ts'), at('config.ts')]],
    [at('router/attempt.ts'), [at('hub/jobs.ts')]],
    [at('trust/checks/judge.ts'), [at('hub/node-sessions.ts'), at('trust/standing/standings.ts')]],
    [at('trust/standing/trust-store.ts'), [at('trust/checks/judge.ts'), at('trust/slashing/convict.ts')]],
    [at('trust/slashing/convict.ts'), [at('trust/slashing/evidence-hash.ts'), at('trust/index.ts')]],
    [at('trust/index.ts'), [at('trust/slashing/convict.ts')]],
    [at('config.ts'), [at('hub/hub.ts')]],
  ]);
  expect(folderCycles(graph, '/src')).toEqual(['hub <-> router', 'trust/checks <-> trust/standing']);
});

test('behavior: an upward import is caught, type-only and sideways ones judged by layer', () => {
  const at = (file: string) => path.join('/src', file);
  const graph = new Map([
    [at('router/attempt.ts'), [at('trust/checks/judge.ts'), at('ledger/charges.ts'), at('router/jobs.ts')]],
    [at('trust/checks/judge.ts'), [at('keys/key-limits.ts'), at('router/types.ts'), at('config.ts')]],
    [at('db/schema.ts'), [at('db/tables/usage.ts'), at('usage/tables.ts')]],
    [at('config.ts'), [at('ledger/money.ts')]],
    [at('compose/start-hub.ts'), [at('app.ts'), at('hub/hub.ts')]],
    [at('v1/routes.ts'), [at('app-context.ts'), at('compose/start-hub.ts')]],
    [at('testing/index.ts'), [at('app.ts')]],
  ]);
  expect(upwardImports(graph, '/src')).toEqual([
    'config.ts -> ledger/money.ts',
    'db/schema.ts -> usage/tables.ts',
    'router/attempt.ts -> trust/checks/judge.ts',
    'v1/routes.ts -> compose/start-hub.ts',
  ]);
  expect(LAYER_NAMES[layerOf('new-helper.ts')]).toBe('base');
  expect(LAYER_NAMES[layerOf('app-context.ts')]).toBe('features');
  expect(LAYER_NAMES[layerOf('compose/start-hub.ts')]).toBe('app');
  expect(LAYER_NAMES[layerOf('v1/media/audio-routes.ts')]).toBe('features');
});
