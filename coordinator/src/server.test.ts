import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, test, vi } from 'vitest';
import { main, startServer } from './server.js';
import { asksForHelp, USAGE } from './usage.js';

describe('startServer', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'gm-server-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  test('default: listens on a free port with a SQLite store in the data dir', async () => {
    const server = await startServer({
      argv: ['--port', '0', '--log-level', 'silent'],
      env: { GPUMESH_DATA_DIR: dataDir },
    });
    try {
      const res = await fetch(`${server.url}/api/auth/nonce?address=0x${'ab'.repeat(20)}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      const missing = await fetch(`${server.url}/nope`);
      expect(missing.status).toBe(404);
      expect(await missing.json()).toMatchObject({ error: { code: 'not_found' } });
    } finally {
      await server.close();
    }
  });

  test('behavior: the CLI exits 143 on SIGTERM after a graceful close', async () => {
    const bin = path.join(import.meta.dirname, '..', 'bin', 'gpumesh-coordinator.js');
    const child = spawn(process.execPath, [bin, '--port', '0', '--data-dir', dataDir], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => {
      out += String(d);
    });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no listen line: ${out}`)), 80_000);
      child.stdout.on('data', () => {
        if (out.includes('gpumesh coordinator listening')) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    const code = await new Promise<number | null>((resolve) => {
      child.once('exit', (c) => resolve(c));
      child.kill('SIGTERM');
    });
    expect(code).toBe(143);
  }, 100_000); // a cold tsx start of the whole coordinator is slow on a loaded 2-core machine
});

describe('main', () => {
  test('behavior: --help prints the usage, ending with one newline', async () => {
    const write = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      for (const argv of [['--help'], ['-h'], ['help'], ['--port', '0', '--help']]) {
        write.mockClear();
        await main(argv, {});
        expect(write.mock.calls, argv.join(' ')).toEqual([[USAGE]]);
      }
    } finally {
      write.mockRestore();
    }
    expect(USAGE.endsWith('\n')).toBe(true);
    expect(USAGE.endsWith('\n\n')).toBe(false);
  });

  test('behavior: a command asked for help prints it and does nothing else (no store is created)', async () => {
    const dataDir = path.join(mkdtempSync(path.join(tmpdir(), 'gm-help-')), 'data');
    const write = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      for (const argv of [
        ['reconcile', '--help'],
        ['reconcile', '--json', '-h'],
        ['reinstate', '--help'],
      ]) {
        write.mockClear();
        await main([...argv, '--data-dir', dataDir], { GPUMESH_DATA_DIR: dataDir });
        expect(write.mock.calls, argv.join(' ')).toEqual([[USAGE]]);
      }
      expect(process.exitCode ?? 0).toBe(0);
      expect(existsSync(dataDir)).toBe(false);
    } finally {
      write.mockRestore();
      rmSync(path.dirname(dataDir), { recursive: true, force: true });
    }
    expect(asksForHelp(['reconcile', '--json'])).toBe(false);
  });

  test('behavior: the command answers --help from its usage module, without loading the server', async () => {
    const cwd = mkdtempSync(path.join(tmpdir(), 'gm-help-bin-'));
    const bin = path.resolve(import.meta.dirname, '../bin/gpumesh-coordinator.js');
    // Loaded modules are listed as the process exits: none of the app's may be among them.
    const probe = path.join(cwd, 'loaded.cjs');
    writeFileSync(
      probe,
      "process.on('exit', () => require('node:fs').writeFileSync(process.env.LOADED, JSON.stringify(Object.keys(require.cache))));",
    );
    try {
      const child = spawn(process.execPath, ['--require', probe, bin, 'reconcile', '--help'], {
        cwd,
        env: { ...process.env, LOADED: path.join(cwd, 'loaded.json') },
      });
      let stdout = '';
      child.stdout.on('data', (chunk) => (stdout += chunk));
      const code = await new Promise((resolve) => child.on('exit', resolve));
      expect(code).toBe(0);
      expect(stdout).toBe(USAGE);
      expect(existsSync(path.join(cwd, '.gpumesh'))).toBe(false);
      expect(readFileSync(path.join(cwd, 'loaded.json'), 'utf8')).not.toMatch(
        /fastify|kysely|better-sqlite3/,
      );
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });
});
