#!/usr/bin/env node
/**
 * Builds the package in the current folder (its npm `build` script, which `prepack` runs): a fresh
 * dist/ compiled by `tsc -p .`, then the files its compiled code reads at run time copied beside it
 * (`--copy from=to`, paths relative to the package). A fresh dist/ so a renamed or deleted module
 * is never shipped.
 *
 *   node ../scripts/build-package.mjs [--copy src/pages/assets=dist/pages/assets]...
 */
import { spawnSync } from 'node:child_process';
import { cpSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { copy: { type: 'string', multiple: true, default: [] } } });
rmSync('dist', { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const compiled = spawnSync(process.execPath, [tsc, '-p', '.'], { stdio: 'inherit' });
if (compiled.status !== 0) process.exit(compiled.status ?? 1);
for (const pair of values.copy) {
  const [from, to] = pair.split('=');
  if (!from || !to) throw new Error(`--copy ${pair}: expected from=to`);
  cpSync(from, to, { recursive: true });
}
