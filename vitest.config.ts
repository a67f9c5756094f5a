import { defineConfig } from 'vitest/config';
import { SlowestFirst } from './test/setup/slowest-first.js';

// One run for every package. Tests that start processes (anvil, nodes, coordinators) run in forks
// so native addons (better-sqlite3, node-llama-cpp) and signals behave as in production. The two
// forks run file after file without a fresh process each (isolate: false): a new fork per file
// loaded the coordinator's and the node's modules again for each of ~200 files, a third of the
// suite's time on this machine. A test file therefore leaves no state behind (environment
// variables restored, fake timers undone, processes reaped); none mocks modules. The slowest files
// start first (test/setup/slowest-first.ts) so both forks finish together.
export default defineConfig({
  // The @gpumesh/* packages export their compiled dist/ by default; the `gpumesh-source` condition
  // (as in tsconfig.base.json and the bins' source mode) runs their src/*.ts, unbuilt. Tests run in
  // Vite's server (ssr) environment, which takes these conditions, not `resolve.conditions`; they
  // add to Vitest's defaults (node, development|production).
  ssr: { resolve: { conditions: ['gpumesh-source'] } },
  test: {
    include: ['{protocol,coordinator,node,test,bench,models}/**/*.test.ts', 'scripts/**/*.test.ts'],
    exclude: ['**/node_modules/**', '**/dist/**'],
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1, isolate: false } },
    sequence: { sequencer: SlowestFirst },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    globalSetup: ['./test/setup/services.ts', './test/setup/leftover-processes.ts'],
  },
});
