import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeTinyModel } from '@gpumesh/node';
import { spawnNodeDaemon } from '@gpumesh/node/testing';

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
  const daemon = spawnNodeDaemon({ coordinator: coordinatorUrl, dir, args: ['--role', 'cpu'] });
  const child = daemon.process;
  return {
    process: child,
    async stop() {
      await daemon.stop();
      rmSync(dir, { recursive: true, force: true });
      if (child.exitCode !== null && child.exitCode !== 143 && child.exitCode !== 0) {
        throw new Error(`gpumesh-node exited ${child.exitCode}: ${daemon.stderr()}`);
      }
    },
  };
}
