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
afterAll(() => rm(dir, { recursive: true, force: true }));

/** Runs install.sh the way `curl … | sh -s -- …` does: POSIX sh. */
async function install(...args: string[]) {
  await mkdir(home, { recursive: true });
  return promisify(execFile)('sh', [SCRIPT, ...args], { env, maxBuffer: 10 * 1024 * 1024 });
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

  test('behavior: installs into a prefix, keeps the node key across an upgrade, --uninstall leaves nothing', {
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

    const upgrade = await install(...args, '--from', ROOT, '--no-service');
    expect(upgrade.stdout).toContain(`Node id: ${nodeId}`);
    const { stdout } = await promisify(execFile)(join(prefix, 'bin', 'gpumesh-node'), [
      'id',
      '--config',
      join(prefix, 'etc', 'gpumesh-node.json'),
    ]);
    expect(stdout.trim()).toBe(nodeId);

    await install('--uninstall', '--prefix', prefix, '--state-dir', state);
    expect(await exists(prefix)).toBe(false);
    expect(await exists(state)).toBe(false);
    expect(await readdir(dir)).toEqual(['home']);
    expect(await readdir(home)).toEqual([]);
  });
});
