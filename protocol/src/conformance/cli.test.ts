import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { startReferenceCoordinator } from './reference/referenceCoordinator.js';
import { startReferenceNode } from './reference/referenceNode.js';
import type { ConformanceReport } from './report.js';

const bin = fileURLToPath(new URL('../../bin/gpumesh-conformance.js', import.meta.url));

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  return port;
}

/** Runs the real command; resolves with its exit status and stdout. */
async function runBin(
  args: string[],
  whileRunning?: (child: ChildProcess) => void,
): Promise<{ code: number; stdout: string }> {
  const child = spawn(process.execPath, [bin, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  whileRunning?.(child);
  const [code] = (await once(child, 'exit')) as [number];
  return { code, stdout };
}

describe('gpumesh-conformance', () => {
  test('default: node --listen against the reference node, --json, exit 0', async () => {
    const port = await freePort();
    const node = startReferenceNode({ url: `ws://127.0.0.1:${port}`, reconnectDelayMs: 50 });
    try {
      const { code, stdout } = await runBin([
        'node',
        '--listen',
        String(port),
        '--json',
        '--step-timeout-ms',
        '2000',
      ]);
      const report = JSON.parse(stdout) as ConformanceReport;
      expect(report.ok).toBe(true);
      expect(report.results.every((r) => r.status === 'pass')).toBe(true);
      expect(code).toBe(0);
    } finally {
      await node.stop();
    }
  });

  test('behavior: coordinator --url prints the table', async () => {
    const coordinator = await startReferenceCoordinator({ heartbeatIntervalMs: 200 });
    try {
      const { code, stdout } = await runBin([
        'coordinator',
        '--url',
        coordinator.url,
        '--scenario',
        'handshake',
      ]);
      expect(stdout).toMatch(/handshake\s+PASS/);
      expect(stdout).toContain('1 passed, 0 failed, 0 skipped');
      expect(code).toBe(0);
    } finally {
      await coordinator.close();
    }
  });

  test('error: a failing scenario exits 1', async () => {
    const port = await freePort();
    const node = startReferenceNode({ url: `ws://127.0.0.1:${port}`, reconnectDelayMs: 50, breaks: 'drain' });
    try {
      const args = ['node', '--listen', String(port), '--scenario', 'drain', '--step-timeout-ms', '500'];
      const { code, stdout } = await runBin(args);
      expect(stdout).toMatch(/drain\s+FAIL/);
      expect(code).toBe(1);
    } finally {
      await node.stop();
    }
  });

  test('error: a usage mistake exits 2', async () => {
    const { code, stdout } = await runBin(['node', '--listen', 'abc']);
    expect(stdout).toContain('--listen must be a non-negative integer');
    expect(code).toBe(2);
  });
});
