import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { KIT_MODEL_FILE, KIT_MODEL_SHA256 } from '../kit-model/kit-model.js';
import { startReferenceCoordinator } from './reference/reference-coordinator.js';
import { type ReferenceNode, startReferenceNode } from './reference/reference-node.js';
import type { ConformanceReport } from './report.js';

const bin = fileURLToPath(new URL('../../bin/gpumesh-conformance.js', import.meta.url));

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  return port;
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Runs the real command; `whenListening` runs once `port` accepts connections. */
async function runBin(
  args: string[],
  port?: number,
  whenListening?: () => void,
): Promise<{ code: number; stdout: string }> {
  const child = spawn(process.execPath, [bin, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  const exited = once(child, 'exit') as Promise<[number]>;
  if (port !== undefined) {
    // Start the node only once the kit listens, so it does not back off on refused connections.
    while (child.exitCode === null && !(await accepts(port))) await new Promise((r) => setTimeout(r, 100));
    whenListening?.();
  }
  const [code] = await exited;
  return { code, stdout };
}

/** Runs `gpumesh-conformance node --listen` with the reference node connecting to it. */
async function runNodeKit(args: string[], breaks?: string): Promise<{ code: number; stdout: string }> {
  const port = await freePort();
  let node: ReferenceNode | undefined;
  try {
    return await runBin(['node', '--listen', String(port), ...args], port, () => {
      node = startReferenceNode({ url: `ws://127.0.0.1:${port}`, reconnectDelayMs: 50, breaks });
    });
  } finally {
    await node?.stop();
  }
}

describe('gpumesh-conformance', () => {
  test('default: node --listen against the reference node, --json, exit 0', async () => {
    const { code, stdout } = await runNodeKit(['--json', '--step-timeout-ms', '2000']);
    const report = JSON.parse(stdout) as ConformanceReport;
    expect(report.ok).toBe(true);
    expect(report.results.every((r) => r.status === 'pass')).toBe(true);
    expect(code).toBe(0);
  });

  test('behavior: coordinator --url prints the table', async () => {
    const coordinator = await startReferenceCoordinator({ heartbeatIntervalMs: 200 });
    try {
      const args = ['coordinator', '--url', coordinator.url, '--scenario', 'handshake'];
      const { code, stdout } = await runBin(args);
      expect(stdout).toMatch(/handshake\s+PASS/);
      expect(stdout).toContain('1 passed, 0 failed, 0 skipped');
      expect(code).toBe(0);
    } finally {
      await coordinator.close();
    }
  });

  test('error: a failing scenario exits 1', async () => {
    const { code, stdout } = await runNodeKit(['--scenario', 'drain', '--step-timeout-ms', '500'], 'drain');
    expect(stdout).toMatch(/drain\s+FAIL/);
    expect(code).toBe(1);
  });

  test('behavior: kit-model writes the kit model, its sha256 the one the verify scenarios look for', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gpumesh-kit-model-'));
    try {
      const file = join(dir, 'models', KIT_MODEL_FILE);
      const { code, stdout } = await runBin(['kit-model', '--out', file]);
      const bytes = await readFile(file);
      expect(createHash('sha256').update(bytes).digest('hex')).toBe(KIT_MODEL_SHA256);
      expect(stdout).toBe(`wrote ${file}: ${bytes.length} bytes, sha256 ${KIT_MODEL_SHA256}\n`);
      expect(code).toBe(0);
      expect(await runBin(['kit-model'])).toMatchObject({
        code: 2,
        stdout: expect.stringContaining('kit-model needs --out'),
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('error: a usage mistake exits 2', async () => {
    const { code, stdout } = await runBin(['node', '--listen', 'abc']);
    expect(stdout).toContain('--listen must be a non-negative integer');
    expect(code).toBe(2);
  });
});
