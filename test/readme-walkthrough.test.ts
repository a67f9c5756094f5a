/**
 * The README's "Use the API, step by step" runs as written (issue 32): its one JavaScript block,
 * saved in the checkout (so `viem` resolves as it would for a reader) and run with node against
 * npm start's own network (scripts/network.ts) — sign in, key, devnet top-up, chat, usage, nodes,
 * payout.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type RunningNetwork, startNetwork } from '../scripts/network.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const run = promisify(execFile);
const dir = mkdtempSync(path.join(tmpdir(), 'gm-walkthrough-'));
const script = path.join(ROOT, `.walkthrough-${process.pid}.mjs`);
let network: RunningNetwork | undefined;

beforeAll(async () => {
  network = await startNetwork({ dataDir: dir, port: 0, rpcPort: 0, nodes: 1, voice: false });
}, 300_000);

afterAll(async () => {
  await network?.stop();
  rmSync(script, { force: true });
  rmSync(dir, { recursive: true, force: true });
});

test('default: the README walkthrough runs as written against npm start’s network', async () => {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('### Use the API, step by step'));
  const block = /```js\n([\s\S]*?)```/.exec(section)?.[1];
  expect(block).toBeDefined();
  writeFileSync(script, block!);
  const { stdout } = await run(process.execPath, [script], {
    cwd: ROOT,
    env: { ...process.env, GPUMESH_NETWORK: path.join(dir, 'network.json') },
    timeout: 240_000,
  });
  expect(stdout).toMatch(/^balance \d+(\.\d+)? USD$/m);
  // npm start's default model, gpumesh/mini-chat, answers the README's question correctly.
  expect(stdout).toMatch(/^reply ".*\b42\b.*" cost \d/m);
  expect(stdout).toMatch(/^requests [1-9]/m);
  expect(stdout).toMatch(/^nodes 1$/m);
  expect(stdout).toMatch(/^payout paid \d/m);
}, 300_000);
