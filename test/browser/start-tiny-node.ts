import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeTinyModel } from '@gpumesh/node';

const NODE_BIN = fileURLToPath(new URL('../../node/bin/gpumesh-node.js', import.meta.url));

/** How long a stopping node may take to drain and exit before it is killed. */
const NODE_STOP_TIMEOUT_MS = 10_000;

export type TinyNode = {
  readonly process: ChildProcess;
  /** SIGTERM (drain, offline, exit), SIGKILL after a timeout; removes its folders. */
  stop(): Promise<void>;
};

/**
 * Starts the real gpumesh-node daemon as its own process, serving the generated tiny GGUF model on
 * node-llama-cpp (CPU), connected to `coordinatorUrl` (the app URL; the node finds the hub).
 */
export async function startTinyNode(coordinatorUrl: string): Promise<TinyNode> {
  const dir = mkdtempSync(join(tmpdir(), 'gpumesh-node-'));
  await writeTinyModel({ path: join(dir, 'models', 'tiny.gguf') });
  const child = spawn(
    process.execPath,
    [
      NODE_BIN,
      'start',
      '--coordinator',
      coordinatorUrl,
      '--role',
      'cpu',
      '--state-dir',
      join(dir, 'state'),
      '--models-dir',
      join(dir, 'models'),
      '--health-port',
      '0',
      '--gpu',
      'cpu',
      '--max-concurrency',
      '1',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, GPUMESH_COORDINATOR: '' } },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk) => {
    stderr = (stderr + String(chunk)).slice(-4_000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    process: child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), NODE_STOP_TIMEOUT_MS);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
      if (child.exitCode !== null && child.exitCode !== 143 && child.exitCode !== 0) {
        throw new Error(`gpumesh-node exited ${child.exitCode}: ${stderr}`);
      }
    },
  };
}
