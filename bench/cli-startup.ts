/**
 * CLI startup: `gpumesh-node --version` and `--help` as an installed package runs them (the
 * compiled dist/, no tsx), against a bare `node -e 0` measured in the same run — the part of the
 * time that is Node.js starting, not ours. Goal (issue 18): under 300 ms each.
 *
 * Run: node --conditions=gpumesh-source --import tsx bench/cli-startup.ts [--runs 15]
 * Builds node/ and protocol/ dist first (npm run build in each).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '15' } } });
const RUNS = Number(values.runs);
const ROOT = path.resolve(import.meta.dirname, '..');

for (const folder of ['protocol', 'node'])
  execFileSync('npm', ['run', '-s', 'build'], { cwd: path.join(ROOT, folder) });
// An installed layout: the package without src/ (so the bin loads dist/), its dependencies beside it.
const app = mkdtempSync(path.join(tmpdir(), 'gm-cli-startup-'));
const pkg = path.join(app, 'node_modules', '@gpumesh', 'node');
mkdirSync(pkg, { recursive: true });
for (const part of ['bin', 'dist', 'package.json'])
  cpSync(path.join(ROOT, 'node', part), path.join(pkg, part), { recursive: true });
for (const dep of [
  '@gpumesh/protocol',
  '@sinclair',
  'viem',
  'ws',
  'node-llama-cpp',
  'systeminformation',
  'ox',
  '@noble',
  '@scure',
  'abitype',
  'isows',
])
  try {
    symlinkSync(path.join(ROOT, 'node_modules', dep), path.join(app, 'node_modules', dep));
  } catch {
    // absent or already linked
  }
const bin = path.join(pkg, 'bin', 'gpumesh-node.js');

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
