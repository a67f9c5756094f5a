import { defineConfig } from 'vitest/config';
import { SlowestFirst } from './test/setup/slowest-first.js';

// One run for every package. Tests that start processes (anvil, nodes, coordinators) run in forks
// so native addons (better-sqlite3, node-llama-cpp) and signals behave as in production, a fresh
// fork per file (reusing forks, isolate: false, cut a third of the unit files' time in a trial but
// has not had a full fresh-clone run yet). The slowest files start first
// (test/setup/slowest-first.ts) so both forks finish together.
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
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    sequence: { sequencer: SlowestFirst },
    testTimeout: 30_000,
    hookTimeout: 60_000,
    globalSetup: ['./test/setup/services.ts', './test/setup/leftover-processes.ts'],
  },
});
