import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { startServer } from './server.js';

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
