/**
 * CLI startup: `gpumesh-node --version` and `--help` as an installed package runs them (the
 * compiled dist/, no tsx), against a bare `node -e 0` measured in the same run — the part of the
 * time that is Node.js starting, not ours. Goal (issue 18): under 300 ms each.
 *
 * Run: node --conditions=gpumesh-source --import tsx bench/cli-startup.ts [--runs 15]
 * Packs the two packages first (scripts/pack-node-packages.mjs, about 20 s).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '15' } } });
const RUNS = Number(values.runs);
const ROOT = path.resolve(import.meta.dirname, '..');

// The installed layout: the packed tarballs unpacked under node_modules/@gpumesh (no src/, so the
// command loads dist/), the checkout's node_modules for their dependencies.
const app = mkdtempSync(path.join(tmpdir(), 'gm-cli-startup-'));
const packs = path.join(app, 'packs');
execFileSync(process.execPath, [path.join(ROOT, 'scripts/pack-node-packages.mjs'), packs]);
const scope = path.join(app, 'node_modules', '@gpumesh');
mkdirSync(scope, { recursive: true });
for (const file of readdirSync(packs)) {
  const name = file.startsWith('gpumesh-node-') ? 'node' : 'protocol';
  mkdirSync(path.join(scope, name));
  execFileSync('tar', ['-xzf', path.join(packs, file), '-C', path.join(scope, name), '--strip-components=1']);
}
for (const dep of readdirSync(path.join(ROOT, 'node_modules'))) {
  if (dep === '@gpumesh' || dep.startsWith('.')) continue;
  symlinkSync(path.join(ROOT, 'node_modules', dep), path.join(app, 'node_modules', dep));
}
const bin = path.join(scope, 'node', 'bin', 'gpumesh-node.js');

function medianMs(args: string[]): number {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    const result = spawnSync(process.execPath, args, { encoding: 'utf8' });
    times.push(performance.now() - start);
    if (result.status !== 0) throw new Error(`${args.join(' ')} exited ${result.status}: ${result.stderr}`);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

const bare = medianMs(['-e', '0']);
const version = medianMs([bin, '--version']);
const help = medianMs([bin, '--help']);
rmSync(app, { recursive: true, force: true });
const figures = {
  runs: RUNS,
  nodeBareMs: Math.round(bare),
  versionMs: Math.round(version),
  helpMs: Math.round(help),
  versionOverBare: Number((version / bare).toFixed(2)),
  helpOverBare: Number((help / bare).toFixed(2)),
};
console.log(JSON.stringify(figures));
console.log(
  `gpumesh-node --version ${figures.versionMs} ms, --help ${figures.helpMs} ms (medians of ${RUNS}); ` +
    `node -e 0 alone ${figures.nodeBareMs} ms: ${figures.versionOverBare}× and ${figures.helpOverBare}× a bare Node start (goal: < 300 ms)`,
);
