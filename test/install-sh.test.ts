import { execFile, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, test } from 'vitest';

const ROOT = join(import.meta.dirname, '..');
const SCRIPT = join(ROOT, 'install.sh');
const dir = await mkdtemp(join(tmpdir(), 'gpumesh-install-'));
const home = join(dir, 'home');
const prefix = join(dir, 'prefix');
const state = join(dir, 'state');
// A throwaway HOME shows the script writes nowhere else; npm keeps using the machine's cache.
const env = {
  ...process.env,
  HOME: home,
  npm_config_cache: process.env.npm_config_cache ?? join(homedir(), '.npm'),
};
afterAll(async () => {
  // A failed run may leave the restart loop and its node behind.
  for (const pid of await processesWith(dir)) process.kill(pid, 'SIGKILL');
  await rm(dir, { recursive: true, force: true });
});

/** Runs install.sh the way `curl … | sh -s -- …` does: POSIX sh. */
async function install(...args: string[]) {
  await mkdir(home, { recursive: true });
  return promisify(execFile)('sh', [SCRIPT, ...args], { env, maxBuffer: 10 * 1024 * 1024 });
}

/** Processes whose command line mentions `text` (Linux /proc), by pid. */
async function processesWith(text: string): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = (await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '')).replaceAll('\0', ' ');
    if (cmdline.includes(text)) found.push(Number(entry));
  }
  return found;
}

/** Waits until `check` holds (the restart loop starts its node in the background). */
async function until(check: () => Promise<boolean>, ms = 20_000): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 100))) {
    if (await check()) return true;
  }
  return check();
}

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

describe('install.sh', () => {
  test('default: shellcheck passes', () => {
    const result = spawnSync('shellcheck', [SCRIPT], { encoding: 'utf8' });
    expect(result.error, 'shellcheck must be installed (CI installs it)').toBeUndefined();
    expect(result.stdout + result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  test('behavior: --dry-run prints the plan and changes nothing', async () => {
    const { stdout } = await install(
      '--dry-run',
      '--role',
      'gpu',
      '--coordinator',
      'https://mesh.example',
      '--prefix',
      prefix,
      '--state-dir',
      state,
      '--from',
      ROOT,
      '--no-service',
    );
    expect(stdout).toContain('gpumesh node install plan');
    expect(stdout).toContain('role:         gpu');
    expect(stdout).toContain('coordinator:  https://mesh.example');
    expect(stdout).toMatch(/would run: npm install --prefix \S+\/app/);
    expect(stdout).toContain('Dry run: nothing was changed.');
    expect(await exists(prefix)).toBe(false);
    expect(await exists(state)).toBe(false);
  });

  test('behavior: installs into a prefix, keeps the node key across an upgrade, --uninstall leaves nothing, its restart loop included', {
    timeout: 600_000,
  }, async () => {
    const args = [
      '--role',
      'cpu',
      '--coordinator',
      'http://127.0.0.1:9',
      '--prefix',
      prefix,
      '--state-dir',
      state,
    ];
    const first = await install(...args, '--from', ROOT, '--no-service');
    const nodeId = /Node id: (0x[0-9a-fA-F]{40})/.exec(first.stdout)?.[1];
    expect(nodeId).toBeDefined();
    expect(JSON.parse(await readFile(join(prefix, 'etc', 'gpumesh-node.json'), 'utf8'))).toEqual({
      coordinator: 'http://127.0.0.1:9',
      role: 'cpu',
      stateDir: state,
      modelsDir: join(state, 'models'),
      gpu: 'cpu',
    });
    expect((await stat(join(state, 'node.key'))).mode & 0o777).toBe(0o600);
    // A CPU node gets node-llama-cpp's CPU build only: the GPU builds are empty packages.
    const cuda = join(prefix, 'app', 'node_modules', '@node-llama-cpp', 'linux-x64-cuda', 'package.json');
    if (await exists(cuda)) expect(JSON.parse(await readFile(cuda, 'utf8')).name).toBe('empty-npm-package');

    // The upgrade installs the service this machine can have without systemd: a restart loop
    // running the node. Upgraded again, the old loop and its node stop first: one node runs.
    const node = join(prefix, 'bin', 'gpumesh-node start');
    const upgrade = await install(...args, '--from', ROOT, '--service', 'loop');
    expect(upgrade.stdout).toContain(`Node id: ${nodeId}`);
    expect(await until(async () => (await processesWith(node)).length === 1)).toBe(true);
    const [firstNode] = await processesWith(node);
    await install(...args, '--from', ROOT, '--service', 'loop');
    expect(
      await until(async () => {
        const running = await processesWith(node);
        return running.length === 1 && running[0] !== firstNode;
      }),
    ).toBe(true);
    // Upgraded to no service, the loop and its node go: the install is what the last run asked for.
    await install(...args, '--from', ROOT, '--no-service');
    expect(await processesWith(node)).toEqual([]);
    expect(await exists(join(prefix, 'bin', 'gpumesh-node-service'))).toBe(false);
    expect(await readFile(join(prefix, 'install-record'), 'utf8')).not.toContain('cron');
    const { stdout } = await promisify(execFile)(join(prefix, 'bin', 'gpumesh-node'), [
      'id',
      '--config',
      join(prefix, 'etc', 'gpumesh-node.json'),
    ]);
    expect(stdout.trim()).toBe(nodeId);

    await install('--uninstall', '--prefix', prefix, '--state-dir', state);
    // The loop and its node are gone (before: the node outlived its loop and its files).
    expect(await processesWith(prefix)).toEqual([]);
    expect(await exists(prefix)).toBe(false);
    expect(await exists(state)).toBe(false);
    expect(await readdir(dir)).toEqual(['home']);
    expect(await readdir(home)).toEqual([]);
  });
});
