/**
 * The packages as users get them: `npm pack` of @gpumesh/protocol, @gpumesh/coordinator and
 * @gpumesh/node, `npm install` of the three tarballs into an empty folder, then their commands, the
 * coordinator's pages and its ledger writer thread — all from dist/, with no tsx or TypeScript.
 *
 * The packages are packed from a copy of their folders with no dist/ (as in a fresh clone; prepack
 * builds it there), so the test neither depends on nor rewrites the checkout's dist/, which
 * install.sh's test packs at the same time. ~30 s packing (three tsc builds) on a 2-core machine,
 * then installing from npm's cache (better-sqlite3's prebuilt addon from a local prebuild tarball).
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { copyCheckout } from './support/copy-checkout.js';

const ROOT = join(import.meta.dirname, '..');
const PACKAGES = ['protocol', 'coordinator', 'node'] as const;
/** What packing the three (three tsc builds) and installing them (a native build) may take. */
const SETUP_TIMEOUT_MS = 600_000;
const run = promisify(execFile);

const dir = await mkdtemp(join(tmpdir(), 'gpumesh-pack-'));
const app = join(dir, 'app');
const tarballs: Record<(typeof PACKAGES)[number], string> = { protocol: '', coordinator: '', node: '' };
const children: ChildProcess[] = [];

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  await rm(dir, { recursive: true, force: true });
});

/** An installing project: the three tarballs, and the checkout's overrides (no GPU builds). */
async function writeAppPackage(): Promise<void> {
  const root = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as {
    overrides: Record<string, string>;
  };
  const dependencies = Object.fromEntries(
    PACKAGES.map((name) => [`@gpumesh/${name}`, `file:${tarballs[name]}`]),
  );
  const pkg = {
    name: 'gpumesh-pack-install',
    private: true,
    dependencies,
    // The coordinator and the node depend on @gpumesh/protocol ^0.1.0: this tarball, not the registry.
    overrides: { ...root.overrides, '@gpumesh/protocol': '$@gpumesh/protocol' },
  };
  await mkdir(app);
  await writeFile(join(app, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
}

/**
 * better-sqlite3 installs with prebuild-install: online it downloads the prebuilt addon for this
 * Node from GitHub, which this offline machine cannot, so it would compile it from source (~70 s of
 * both cores). Here prebuild-install finds that same kind of tarball locally, made from the addon
 * the checkout's own install compiled: the install runs as a user's online one does.
 */
async function betterSqlitePrebuild(): Promise<string> {
  const sqliteDir = join(ROOT, 'node_modules', 'better-sqlite3');
  const { version } = JSON.parse(await readFile(join(sqliteDir, 'package.json'), 'utf8')) as {
    version: string;
  };
  const prebuilds = join(dir, 'prebuilds');
  await mkdir(prebuilds, { recursive: true });
  const { platform, arch, versions } = process;
  const tarball = `better-sqlite3-v${version}-node-v${versions.modules}-${platform}-${arch}.tar.gz`;
  await run('tar', ['-czf', join(prebuilds, tarball), '-C', sqliteDir, 'build/Release/better_sqlite3.node']);
  return prebuilds;
}

/** Runs an installed command the way a user of the folder does (`npx`, never fetching it). */
function npx(...args: string[]) {
  return run('npx', ['--no', '--', ...args], { cwd: app });
}

/** The paths in a tarball, without npm's `package/` prefix. */
async function entries(tarball: string): Promise<string[]> {
  const { stdout } = await run('tar', ['-tzf', tarball], { maxBuffer: 10 * 1024 * 1024 });
  return stdout
    .split('\n')
    .filter(Boolean)
    .map((path) => path.replace(/^package\//, ''));
}

beforeAll(async () => {
  const checkout = join(dir, 'checkout');
  const packed = join(dir, 'tarballs');
  await mkdir(packed, { recursive: true });
  await copyCheckout(checkout, PACKAGES);
  for (const name of PACKAGES) {
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', packed], {
      cwd: join(checkout, name),
      maxBuffer: 10 * 1024 * 1024,
    });
    // The JSON report, after anything prepack's build printed.
    const [report] = JSON.parse(stdout.slice(stdout.search(/^\[$/m))) as { filename: string }[];
    tarballs[name] = join(packed, report!.filename);
  }
  await writeAppPackage();
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: app,
    maxBuffer: 10 * 1024 * 1024,
    env: { ...process.env, npm_config_better_sqlite3_local_prebuilds: await betterSqlitePrebuild() },
  });
}, SETUP_TIMEOUT_MS);

describe('packed packages', () => {
  test('default: each tarball ships dist/ and bin/ with what the compiled code reads, never src/', async () => {
    const [protocol, coordinator, node] = await Promise.all(PACKAGES.map((name) => entries(tarballs[name])));
    for (const files of [protocol!, coordinator!, node!]) {
      expect(files).toContain('dist/index.js');
      expect(files).toContain('dist/index.d.ts');
      const sources = files.filter((path) => path.startsWith('src/') || /(?<!\.d)\.ts$/.test(path));
      expect(sources).toEqual([]);
    }
    expect(protocol).toEqual(
      expect.arrayContaining([
        'bin/gpumesh-conformance.js',
        'bin/load-entry.js',
        'proto/gpumesh.proto',
        'vectors/verify/kit-model.json',
      ]),
    );
    expect(coordinator).toEqual(
      expect.arrayContaining([
        'bin/gpumesh-coordinator.js',
        'dist/ledger/writer-thread.js',
        'dist/pages/install.sh',
        'dist/pages/assets/styles/1-base.css',
        'dist/pages/assets/dashboard/main.js',
      ]),
    );
    expect(node).toContain('bin/gpumesh-node.js');
  });

  test('default: the installed commands run', async () => {
    const { version } = JSON.parse(await readFile(join(ROOT, 'node', 'package.json'), 'utf8'));
    expect((await npx('gpumesh-node', '--version')).stdout).toBe(`${version}\n`);
    expect((await npx('gpumesh-conformance', '--help')).stdout).toContain(
      'gpumesh-conformance node --listen',
    );
    expect((await npx('gpumesh-coordinator', '--help')).stdout).toContain('Usage: gpumesh-coordinator');
    // The kit model and the reference results the compiled verify scenarios read.
    const kitModel = join(dir, 'kit', 'gpumesh-kit.gguf');
    expect((await npx('gpumesh-conformance', 'kit-model', '--out', kitModel)).stdout).toMatch(
      /^wrote .*: 544128 bytes, sha256 87c1f749819809dc33fbf9d7cf3ed3dd6bc42859df86beb3783d05a099f4fb84\n$/,
    );
    const vectors = await run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "import { verifyVectors } from '@gpumesh/protocol/conformance'; console.log(verifyVectors().model.sha256)",
      ],
      { cwd: app },
    );
    expect(vectors.stdout).toBe('87c1f749819809dc33fbf9d7cf3ed3dd6bc42859df86beb3783d05a099f4fb84\n');
    // The coordinator's peer-RPC loads the .proto the protocol package ships; the node and the
    // coordinator share sendCoalesced through /internal.
    const peerRpc = await run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        [
          // Not an export of the coordinator: its compiled file, as its own code imports it.
          `import { loadPeerProto } from '${pathToFileURL(join(app, 'node_modules/@gpumesh/coordinator/dist/peer/load-peer-proto.js'))}';`,
          "import { sendCoalesced } from '@gpumesh/protocol/internal';",
          'console.log(Object.keys(loadPeerProto().service).sort().join(), typeof sendCoalesced)',
        ].join('\n'),
      ],
      { cwd: app },
    );
    expect(peerRpc.stdout).toBe('Embed,GetManifest,Infer,Ping function\n');
  });

  test('behavior: no tsx or TypeScript is installed with them', async () => {
    const { stdout } = await run('npm', ['ls', '--all', '--parseable'], {
      cwd: app,
      maxBuffer: 10 * 1024 * 1024,
    });
    const installed = stdout.split('\n').map((path) => path.split(/node_modules[/\\]/).pop());
    expect(installed).toContain('@gpumesh/node');
    expect(installed.filter((name) => name === 'tsx' || name === 'typescript')).toEqual([]);
  });

  test('behavior: the installed coordinator serves its pages, their assets, install.sh and the node package; SIGTERM exits 143', {
    timeout: 60_000,
  }, async () => {
    const bin = join(app, 'node_modules', '.bin', 'gpumesh-coordinator');
    const dataDir = join(dir, 'coordinator-data');
    await mkdir(dataDir);
    const child = spawn(bin, ['--port', '0', '--data-dir', dataDir], {
      cwd: app,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let output = '';
    const url = await new Promise<string>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        const listening = output.match(/"url":"(http:\/\/[^"]+)".*"msg":"gpumesh coordinator listening"/);
        if (listening) resolve(listening[1]!);
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      child.once('exit', (code) => reject(new Error(`the coordinator exited with ${code}:\n${output}`)));
    });
    const install = await fetch(`${url}/install.sh`);
    expect(install.status).toBe(200);
    expect(await install.text()).toContain('gpumesh provider node installer');
    // The node package it was built with, for install.sh: listed with hashes, served as listed.
    const list = (await (await fetch(`${url}/install/packages.json`)).json()) as {
      packages: { file: string; sha256: string }[];
    };
    expect(list.packages.map((p) => p.file.replace(/-[\d.]+\.tgz$/, ''))).toEqual([
      'gpumesh-protocol',
      'gpumesh-node',
    ]);
    for (const { file, sha256 } of list.packages) {
      const bytes = Buffer.from(await (await fetch(`${url}/install/packages/${file}`)).arrayBuffer());
      expect(createHash('sha256').update(bytes).digest('hex')).toBe(sha256);
    }
    for (const name of ['/network', '/dashboard']) {
      const page = await fetch(`${url}${name}`);
      expect(page.status, name).toBe(200);
      // The pages' scripts, stylesheet and icon, and the dashboard's modules (assets/dashboard/).
      const assets = [...(await page.text()).matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map(
        ([, path]) => path,
      );
      expect(assets.length, name).toBeGreaterThan(0);
      for (const path of assets) expect((await fetch(`${url}${path}`)).status, path).toBe(200);
    }
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    expect(await exited).toBe(143);
  });

  test('behavior: the compiled ledger writer thread starts and commits', async () => {
    // The thread's entry is a file beside the compiled writer that no import names: only starting
    // the thread shows it is shipped.
    const script = join(app, 'ledger-writer.mjs');
    await writeFile(
      script,
      `import { Ledger, migrate, openStore } from '@gpumesh/coordinator';
const store = openStore({ sqlitePath: process.argv[2] });
await migrate(store.db);
const ledger = new Ledger(store);
await ledger.credit({ userId: 'u1', amountNano: 1000n, ref: 'pay-u1' });
const hold = await ledger.reserve({ userId: 'u1', amountNano: 300n });
const balance = await ledger.balance('u1');
const writer = ledger.writer;
console.log(JSON.stringify({ ok: hold.ok, balanceNano: String(balance.balanceNano), running: writer?.running === true, transactions: ledger.stats.transactions }));
await ledger.close();
await store.close();
`,
    );
    const { stdout } = await run(process.execPath, [script, join(dir, 'ledger.db')], { cwd: app }).catch(
      (error: { stderr?: string; stdout?: string; code?: number; signal?: string; message: string }) => {
        throw new Error(
          `${error.message} (${error.code ?? error.signal})\n${error.stdout ?? ''}\n${error.stderr ?? ''}`,
        );
      },
    );
    const result = JSON.parse(stdout);
    expect(result).toMatchObject({ ok: true, balanceNano: '700', running: true });
    expect(result.transactions).toBeGreaterThan(0);
  });
});
