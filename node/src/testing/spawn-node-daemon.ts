import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

/** How long a spawned daemon may drain after SIGTERM before it is killed. */
export const SPAWNED_NODE_STOP_TIMEOUT_MS = 10_000;

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'gpumesh-node.js');

export type SpawnNodeDaemonOptions = {
  /** The coordinator's app URL or hub WebSocket URL. */
  coordinator: string;
  /** Holds `state/` (the node key) and `models/` (GGUF files) unless the args say otherwise. */
  dir: string;
  /** Further `gpumesh-node start` flags, e.g. `['--offer-embeddings', 'true']`. */
  args?: readonly string[];
  /** Node.js flags for the daemon's process, e.g. `['--cpu-prof', '--cpu-prof-dir', dir]`. */
  nodeArgs?: readonly string[];
};

export type SpawnedNodeDaemon = {
  readonly process: ChildProcess;
  /** The last 4 KB the daemon wrote to stderr (for failure messages). */
  stderr(): string;
  /** SIGTERM (the daemon drains, then exits 143), SIGKILL after a timeout; resolves once it exited. */
  stop(): Promise<void>;
};

/**
 * Runs the real `gpumesh-node start` as a child process, on the CPU, one job at a time, with its
 * health endpoint on a free port and no coordinator from the caller's environment.
 */
export function spawnNodeDaemon(options: SpawnNodeDaemonOptions): SpawnedNodeDaemon {
  const child = spawn(
    process.execPath,
    [
      ...(options.nodeArgs ?? []),
      BIN,
      'start',
      '--coordinator',
      options.coordinator,
      '--state-dir',
      join(options.dir, 'state'),
      '--models-dir',
      join(options.dir, 'models'),
      '--health-port',
      '0',
      '--gpu',
      'cpu',
      '--max-concurrency',
      '1',
      ...(options.args ?? []),
    ],
    { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, GPUMESH_COORDINATOR: '' } },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4_000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    process: child,
    stderr: () => stderr,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), SPAWNED_NODE_STOP_TIMEOUT_MS);
        await exited;
        clearTimeout(timer);
      }
    },
  };
}
