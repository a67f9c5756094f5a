/**
 * A GPU owner's first command on a fresh machine: `curl -fsSL <coordinator>/install.sh | sh -s --
 * --role cpu --no-service`, with a new user's HOME and no repository — the node package comes from
 * the coordinator itself (GET /install/packages.json, its SHA-256 checked), npm's registry only for
 * its dependencies. The installed node then serves the generated model and `gpumesh-node status
 * --json` reports it online. A corrupted tarball is refused and the failed install leaves nothing.
 */
import { execFile, spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { writeTinyModel } from '@gpumesh/node';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createTestApp, type TestApp, testBackends } from '../coordinator/src/testing/index.js';
import { until } from '../coordinator/src/testing/until.js';
import { copyCheckout } from './support/copy-checkout.js';

const run = promisify(execFile);
const sqlite = testBackends().find((b) => b.name === 'sqlite')!;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

describe('install.sh from the coordinator (fresh HOME, no repository)', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'gm-install-coord-'));
  const packages = path.join(dir, 'packages');
  let t: TestApp;
  let base: string;
  const started: ReturnType<typeof spawn>[] = [];

  beforeAll(async () => {
    // What the compiled coordinator ships in dist/packages (its build runs this script), packed
    // from a copy of the checkout (install.sh's test packs the checkout itself at the same time).
    const checkout = path.join(dir, 'checkout');
    await copyCheckout(checkout, ['protocol', 'node']);
    await run(process.execPath, [path.join(checkout, 'scripts/pack-node-packages.mjs'), packages], {
      cwd: checkout,
    });
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    t = await createTestApp(sqlite, {
      label: 'install',
      overrides: { nodePackagesDir: packages, publicUrl: base, port },
    });
    await t.app.listen({ port, host: '127.0.0.1' });
  }, 180_000);

  afterAll(async () => {
    for (const child of started) child.kill('SIGKILL');
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /**
   * `curl -fsSL <base>/install.sh | sh -s -- <args>` as a user whose HOME is `home`. Tests run as
   * root here, whose defaults are /opt and /var/lib: the prefix and state go under HOME instead
   * (a non-root user's defaults).
   */
  const install = (home: string, args: string[]) => {
    mkdirSync(home, { recursive: true });
    const where = `--prefix ${home}/.local/share/gpumesh-node --state-dir ${home}/.gpumesh-node`;
    return run('sh', ['-c', `curl -fsSL ${base}/install.sh | sh -s -- ${args.join(' ')} ${where}`], {
      env: {
        PATH: process.env.PATH,
        HOME: home,
        // npm keeps the machine's cache (the registry is reachable; nothing else is).
        npm_config_cache: process.env.npm_config_cache ?? path.join(homedir(), '.npm'),
      },
      timeout: 300_000,
    });
  };

  test('behavior: packing the same sources again copies the kept tarballs, byte for byte', async () => {
    const again = path.join(dir, 'packages-again');
    await run(process.execPath, [path.join(dir, 'checkout', 'scripts/pack-node-packages.mjs'), again]);
    const names = readdirSync(packages).sort();
    expect(readdirSync(again).sort()).toEqual(names);
    for (const name of names)
      expect(readFileSync(path.join(again, name))).toEqual(readFileSync(path.join(packages, name)));
    // Kept by the hash of the sources (the checkout copy's node_modules is the repository's).
    const kept = path.join(import.meta.dirname, '..', 'node_modules', '.cache', 'gpumesh-node-packages');
    expect(
      readdirSync(kept).some((hash) => readdirSync(path.join(kept, hash)).sort().join() === names.join()),
    ).toBe(true);
  });

  test('behavior: installs the coordinator’s own package (SHA-256 checked); the node comes online and status --json says so', async () => {
    const home = path.join(dir, 'owner');
    const { stdout } = await install(home, ['--role', 'cpu', '--no-service']);
    expect(stdout).toMatch(/gpumesh-node-[\d.]+\.tgz \(\d+ bytes, SHA-256 [0-9a-f]{16}…\) verified/);
    expect(stdout).toContain(`coordinator:  ${base}`);
    const prefix = path.join(home, '.local/share/gpumesh-node');
    const bin = path.join(prefix, 'bin/gpumesh-node');
    const config = path.join(prefix, 'etc/gpumesh-node.json');
    await writeTinyModel({ path: path.join(home, '.gpumesh-node/models/tiny.gguf') });
    const healthPort = String(await freePort());
    const node = spawn(bin, ['start', '--config', config, '--health-port', healthPort], {
      env: { PATH: process.env.PATH, HOME: home },
      stdio: 'ignore',
    });
    started.push(node);
    let status: {
      online?: boolean;
      nodeId?: string;
      network?: { live: boolean; earnings: { unit: string; total: number }; uptime: { last24h: number } };
    } = {};
    await until(
      async () => {
        const out = await run(bin, ['status', '--json', '--config', config, '--health-port', healthPort], {
          env: { PATH: process.env.PATH, HOME: home },
        }).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '{}' }));
        status = JSON.parse(out.stdout || '{}');
        return status.online === true;
      },
      90_000,
      250,
    );
    // The coordinator it came from lists it, serving the model under the catalog's id.
    expect(t.app.hub.index.node(status.nodeId!)?.state).toBe('online');
    expect(t.app.hub.index.offers('gpumesh/tiny-chat')?.has(status.nodeId!)).toBe(true);
    // `status` also gives the coordinator's own figures for it: earnings in USD, uptime.
    expect(status.network).toMatchObject({ live: true, earnings: { unit: 'USD', total: 0 } });
    node.kill('SIGTERM');
  }, 360_000);

  test('error: a corrupted tarball is refused and the failed install leaves nothing behind', async () => {
    // The coordinator listed its hashes already; the file it serves now is not that file.
    const tarball = readdirSync(packages).find((f) => f.startsWith('gpumesh-node-'))!;
    writeFileSync(path.join(packages, tarball), 'not the package');
    const home = path.join(dir, 'victim');
    const failed = await install(home, ['--role', 'cpu', '--no-service']).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stderr).toMatch(
      /SHA-256 [0-9a-f]{64}, but the coordinator lists [0-9a-f]{64}; refusing it/,
    );
    expect(existsSync(path.join(home, '.local/share/gpumesh-node'))).toBe(false);
    expect(existsSync(path.join(home, '.gpumesh-node'))).toBe(false);
  }, 120_000);
});
