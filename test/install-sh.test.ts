import { execFile, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readdir, readFile, readlink, rm, stat, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { writeTinyModel } from '@gpumesh/node';
import { afterAll, describe, expect, test } from 'vitest';
import { until } from '../coordinator/src/testing/until.js';
import { installArgsAgainst, notReady, serve } from './support/stand-in-coordinator.js';

const ROOT = join(import.meta.dirname, '..');
const SCRIPT = join(ROOT, 'install.sh');
const dir = await mkdtemp(join(tmpdir(), 'gpumesh-install-'));
const home = join(dir, 'home');
const prefix = join(dir, 'prefix');
const state = join(dir, 'state');
// systemd does not run in this container: a stand-in `systemctl` first on PATH logs its calls, so
// the unit paths are exercised (the unit files are real; nothing starts them). The system-wide
// service's dedicated user is not created on this machine either: stand-ins for useradd, userdel,
// chown and `id <user>` log their calls and keep the "users" in a file (`id -u` stays the real one).
const standIn = await mkdtemp(join(tmpdir(), 'gpumesh-systemctl-'));
const systemctlLog = join(standIn, 'calls.log');
const accountsLog = join(standIn, 'accounts.log');
const users = join(standIn, 'users');
await writeFile(users, '');
const realId = spawnSync('sh', ['-c', 'command -v id'], { encoding: 'utf8' }).stdout.trim();
const script = (body: string) => `#!/bin/sh\n${body}\n`;
await writeFile(join(standIn, 'systemctl'), script(`echo "$*" >>'${systemctlLog}'`), { mode: 0o755 });
for (const command of ['userdel', 'chown'])
  await writeFile(join(standIn, command), script(`echo "${command} $*" >>'${accountsLog}'`), { mode: 0o755 });
await writeFile(
  join(standIn, 'useradd'),
  script(`echo "useradd $*" >>'${accountsLog}'\nfor last; do :; done\necho "$last" >>'${users}'`),
  { mode: 0o755 },
);
await writeFile(
  join(standIn, 'id'),
  script(`case "$1" in -*|'') exec '${realId}' "$@" ;; esac\ngrep -qx "$1" '${users}'`),
  { mode: 0o755 },
);
// Where the system-wide unit and the command's link go, instead of /etc/systemd/system and /usr/local/bin.
const systemUnits = join(dir, 'etc-systemd-system');
const binDir = join(dir, 'usr-local-bin');
// A throwaway HOME shows the script writes nowhere else; npm keeps using the machine's cache.
const env = {
  ...process.env,
  HOME: home,
  PATH: `${standIn}:${process.env.PATH}`,
  GPUMESH_SYSTEMD_DIR: systemUnits,
  GPUMESH_BIN_DIR: binDir,
  npm_config_cache: process.env.npm_config_cache ?? join(homedir(), '.npm'),
};
afterAll(async () => {
  // A failed run may leave the restart loop and its node behind.
  for (const pid of await processesWith(dir)) process.kill(pid, 'SIGKILL');
  await rm(dir, { recursive: true, force: true });
  await rm(standIn, { recursive: true, force: true });
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

/** install.sh's arguments for a coordinator-package install from `server`, into the test's folders. */
const against = (server: Server): string[] => installArgsAgainst(server, { prefix, state });

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

  test('behavior: GPU branches with a stand-in nvidia-smi — CUDA on a CUDA 12 driver; Vulkan and what to do on an older one or none; the service user joins the GPU groups', async () => {
    // Stand-in for nvidia-smi (no NVIDIA GPU here): prints the header line that names the driver's CUDA.
    const gpuBin = await mkdtemp(join(tmpdir(), 'gpumesh-nvidia-'));
    const plan = async (cuda: string | null) => {
      await writeFile(
        join(gpuBin, 'nvidia-smi'),
        script(
          cuda ? `echo "| NVIDIA-SMI 550.54  Driver Version: 550.54  CUDA Version: ${cuda} |"` : 'exit 9',
        ),
        { mode: 0o755 },
      );
      const { stdout, stderr } = await promisify(execFile)(
        'sh',
        [
          SCRIPT,
          '--dry-run',
          '--role',
          'gpu',
          '--service',
          'system',
          '--prefix',
          prefix,
          '--state-dir',
          state,
          '--from',
          ROOT,
        ],
        { env: { ...env, PATH: `${gpuBin}:${env.PATH}` } },
      );
      return { stdout, stderr };
    };
    try {
      const cuda12 = await plan('12.4');
      expect(cuda12.stdout).toContain('GPU: nvidia (driver CUDA 12.4), node-llama-cpp build: cuda');
      expect(cuda12.stderr).toBe('');
      // The unit's user may open the GPU's device files (whichever of the groups this machine has).
      const groups = ['render', 'video'].filter((g) => spawnSync('getent', ['group', g]).status === 0);
      expect(groups.length).toBeGreaterThan(0);
      for (const group of groups) expect(cuda12.stdout).toContain(`would run: usermod -aG ${group} gpumesh`);
      const cuda11 = await plan('11.4');
      expect(cuda11.stdout).toContain('node-llama-cpp build: vulkan');
      expect(cuda11.stderr).toContain("supports CUDA 11.4; node-llama-cpp's CUDA build needs 12 or newer");
      expect(cuda11.stderr).toContain('Update the driver');
      const silent = await plan(null);
      expect(silent.stdout).toContain('node-llama-cpp build: vulkan');
      expect(silent.stderr).toContain('nvidia-smi did not answer');
      expect(await exists(prefix)).toBe(false);
    } finally {
      await rm(gpuBin, { recursive: true, force: true });
    }
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

  test('error: --from a folder that is neither a checkout nor packed packages is refused, and nothing changes', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'gpumesh-not-packed-'));
    try {
      const args = ['--role', 'cpu', '--prefix', prefix, '--state-dir', state, '--from', empty];
      const refused = await install(...args).catch((error: { code: number; stderr: string }) => error);
      expect(refused).toMatchObject({
        code: expect.any(Number),
        stderr: expect.stringContaining('is neither a'),
      });
      expect(await exists(prefix)).toBe(false);
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });

  test('behavior: --voice plans the built-in voice engines (installed here: nothing to add)', async () => {
    const { stdout } = await install(
      '--dry-run',
      '--voice',
      '--prefix',
      prefix,
      '--state-dir',
      state,
      '--from',
      ROOT,
      '--no-service',
    );
    expect(stdout).toContain('voice:        espeak-ng (speech), pocketsphinx-en-us (transcription)');
    expect(stdout).not.toContain('voice engines: missing');
    expect(await exists(prefix)).toBe(false);
  });

  test('behavior: a coordinator still preparing the package (503 + Retry-After) is waited for, saying so', async () => {
    // The listing answers 503 twice, the tarball once, each asking for 1 s; then the coordinator
    // serves a tarball that is not the listed one, so the install stops at the SHA-256 check
    // (nothing of npm's runs): the waits were honoured on both the listing and the download.
    const file = 'gpumesh-protocol-0.0.0.tgz';
    const listed = createHash('sha256').update('the listed package').digest('hex');
    let listings = 0;
    let downloads = 0;
    const server = await serve((url, res) => {
      if (url === '/install/packages.json' && ++listings <= 2) return notReady(res, '1');
      if (url === '/install/packages.json')
        return res.end(JSON.stringify({ version: '0.0.0', packages: [{ file, sha256: listed }] }));
      if (url === `/install/packages/${file}` && ++downloads <= 1) return notReady(res, '1');
      res.end('another package');
    });
    try {
      const failed = await install(...against(server)).then(
        () => undefined,
        (error: { code: number; stdout: string; stderr: string }) => error,
      );
      expect(failed?.code).toBe(1);
      expect(
        failed?.stdout.match(
          /the coordinator is not ready \(HTTP 503: The node package is being prepared; retry in a few seconds\.\); waiting 1 s \(up to 120 s in all\)/g,
        ),
      ).toHaveLength(3);
      expect(failed?.stderr).toMatch(
        /SHA-256 [0-9a-f]{64}, but the coordinator lists [0-9a-f]{64}; refusing it/,
      );
      expect([listings, downloads]).toEqual([3, 2]);
      expect(await exists(prefix)).toBe(false);
    } finally {
      server.close();
    }
  });

  test('error: a coordinator that stays at 503 is given up on after the bounded wait, with what happened', async () => {
    let listings = 0;
    const server = await serve((_url, res) => {
      listings++;
      notReady(res, '1');
    });
    try {
      const failed = await promisify(execFile)('sh', [SCRIPT, ...against(server)], {
        env: { ...env, GPUMESH_INSTALL_WAIT_S: '2' },
      }).then(
        () => undefined,
        (error: { code: number; stdout: string; stderr: string }) => error,
      );
      expect(failed?.code).toBe(1);
      expect(failed?.stdout).toContain('waiting 1 s (up to 2 s in all)');
      expect(failed?.stderr).toMatch(
        /packages\.json: HTTP 503 still after waiting 2 s \(set GPUMESH_INSTALL_WAIT_S to wait longer\)/,
      );
      expect(failed?.stderr).toContain('could not be installed');
      expect(listings).toBe(3);
      expect(await exists(prefix)).toBe(false);
      expect(await exists(state)).toBe(false);
    } finally {
      server.close();
    }
  });

  test('behavior: installs into a prefix, keeps the node key across upgrades, --uninstall leaves nothing; a system unit under a dedicated user, a user-level unit, a restart loop, then none', {
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
    // First as a system-wide systemd service under a dedicated user.
    await mkdir(systemUnits, { recursive: true });
    await mkdir(binDir, { recursive: true });
    const first = await install(...args, '--from', ROOT, '--service', 'system');
    // The upgrades install the packages this install packed (--from a folder of them): packing
    // again would only take time.
    const packed = await mkdtemp(join(tmpdir(), 'gpumesh-packed-'));
    for (const file of (await readdir(join(prefix, 'app'))).filter((f) => f.endsWith('.tgz')))
      await copyFile(join(prefix, 'app', file), join(packed, file));
    const systemUnit = await readFile(join(systemUnits, 'gpumesh-node.service'), 'utf8');
    expect(systemUnit).toContain('User=gpumesh\n');
    expect(systemUnit).toContain(
      `ExecStart=${join(prefix, 'bin', 'gpumesh-node')} start --config ${join(prefix, 'etc', 'gpumesh-node.json')}`,
    );
    expect(systemUnit).toContain('Restart=always');
    expect(systemUnit).toContain('SuccessExitStatus=130 143');
    expect((await readFile(accountsLog, 'utf8')).trim().split('\n')).toEqual([
      `useradd --system --home-dir ${state} --shell /usr/sbin/nologin gpumesh`,
      `chown -R gpumesh ${state}`,
    ]);
    expect((await readFile(systemctlLog, 'utf8')).trim().split('\n')).toEqual([
      'daemon-reload',
      'enable --now gpumesh-node',
      'restart gpumesh-node',
    ]);
    expect(await readlink(join(binDir, 'gpumesh-node'))).toBe(join(prefix, 'bin', 'gpumesh-node'));
    await writeFile(systemctlLog, '');

    // Upgraded to a user-level systemd service (its folder exists, as on a machine that runs one):
    // the system unit is stopped and removed first; the dedicated user stays until --uninstall.
    const units = join(home, '.config', 'systemd', 'user');
    await mkdir(units, { recursive: true });
    const userInstall = await install(...args, '--from', packed, '--service', 'user');
    expect(await readdir(systemUnits)).toEqual([]);
    const unit = await readFile(join(units, 'gpumesh-node.service'), 'utf8');
    expect(unit).toContain(
      `ExecStart=${join(prefix, 'bin', 'gpumesh-node')} start --config ${join(prefix, 'etc', 'gpumesh-node.json')}`,
    );
    expect(unit).toContain('Restart=always');
    expect((await readFile(systemctlLog, 'utf8')).trim().split('\n')).toEqual([
      'disable --now gpumesh-node',
      'daemon-reload',
      '--user daemon-reload',
      '--user enable --now gpumesh-node',
      '--user restart gpumesh-node',
    ]);
    const nodeId = /Node id: (0x[0-9a-fA-F]{40})/.exec(first.stdout)?.[1];
    expect(nodeId).toBeDefined();
    expect(userInstall.stdout).toContain(`Node id: ${nodeId}`);
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
    // A node with no model exits at once (exit 3, by design): give it one to serve.
    await writeTinyModel({ path: join(state, 'models', 'tiny.gguf') });
    const upgrade = await install(...args, '--from', packed, '--service', 'loop');
    expect(upgrade.stdout).toContain(`Node id: ${nodeId}`);
    // The user unit it replaces is stopped and removed.
    expect(await readFile(systemctlLog, 'utf8')).toContain('--user disable --now gpumesh-node\n');
    expect(await readdir(units)).toEqual([]);
    // The restart loop starts its node in the background.
    await until(async () => (await processesWith(node)).length === 1, 20_000, 100);
    const [firstNode] = await processesWith(node);
    await install(...args, '--from', packed, '--service', 'loop');
    await until(
      async () => {
        const running = await processesWith(node);
        return running.length === 1 && running[0] !== firstNode;
      },
      20_000,
      100,
    );
    // Upgraded to no service, the loop and its node go: the install is what the last run asked for.
    await install(...args, '--from', packed, '--no-service');
    expect(await processesWith(node)).toEqual([]);
    expect(await exists(join(prefix, 'bin', 'gpumesh-node-service'))).toBe(false);
    expect(await readFile(join(prefix, 'install-record'), 'utf8')).not.toContain('cron');
    const { stdout } = await promisify(execFile)(join(prefix, 'bin', 'gpumesh-node'), [
      'id',
      '--config',
      join(prefix, 'etc', 'gpumesh-node.json'),
    ]);
    expect(stdout.trim()).toBe(nodeId);

    await rm(packed, { recursive: true, force: true });
    await install('--uninstall', '--prefix', prefix, '--state-dir', state);
    // The loop and its node are gone (before: the node outlived its loop and its files).
    expect(await processesWith(prefix)).toEqual([]);
    expect(await exists(prefix)).toBe(false);
    expect(await exists(state)).toBe(false);
    // The dedicated user and the command's link go too.
    expect(await readFile(accountsLog, 'utf8')).toContain('userdel gpumesh\n');
    expect(await readdir(binDir)).toEqual([]);
    expect(await readdir(systemUnits)).toEqual([]);
    expect((await readdir(dir)).sort()).toEqual(['etc-systemd-system', 'home', 'usr-local-bin']);
    // Only the machine's own (pre-existing, here made by the test) unit folder, empty.
    expect(await readdir(home)).toEqual(['.config']);
    expect(await readdir(units)).toEqual([]);
  });
});
