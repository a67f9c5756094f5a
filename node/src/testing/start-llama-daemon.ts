/**
 * The real node daemon in this process on the real llama runtime (node-llama-cpp, CPU, the models
 * of `modelsDir`), optionally wrapped: how the trust arena (test/trust-arena.test.ts) builds honest
 * nodes and the liars it tries to catch — a liar is the real daemon around a runtime that lies
 * (other weights under a claimed sha256, made-up token ids, replayed answers…). Exported only from
 * `@gpumesh/node/testing`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { signOwnerProof } from '@gpumesh/protocol';
import type { Llama } from 'node-llama-cpp';
import type { Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { loadConfig } from '../config.js';
import { type Daemon, startDaemon } from '../daemon.js';
import { createRuntime } from '../runtimes/create-runtime.js';
import type { Runtime } from '../runtimes/runtime.js';
import { TEST_MACHINE } from './test-machine.js';

export type LlamaDaemonOptions = {
  /** The coordinator's URL (http://…; the daemon connects to its /node). */
  coordinator: string;
  /** GGUF files served. */
  modelsDir: string;
  /** `cpu` (default) or `network` (verifies others). */
  role?: 'cpu' | 'network';
  /** The owner wallet's key: the manifest carries its proof. */
  ownerPrivateKey?: Hex;
  /** Wraps the real runtime (a liar's lie). */
  wrap?: (runtime: Runtime) => Runtime;
  /** Shares a loaded llama.cpp binding. */
  llama?: Llama;
  maxConcurrency?: number;
};

export type LlamaDaemon = { readonly nodeId: string; readonly daemon: Daemon; stop(): Promise<void> };

/** Starts the daemon; resolves once its hub session is admitted. */
export async function startLlamaDaemon(options: LlamaDaemonOptions): Promise<LlamaDaemon> {
  const stateDir = mkdtempSync(path.join(tmpdir(), 'gm-llama-daemon-'));
  const key = generatePrivateKey();
  writeFileSync(path.join(stateDir, 'node.key'), `${key}\n`, { mode: 0o600 });
  const proof = options.ownerPrivateKey
    ? await signOwnerProof(privateKeyToAccount(key).address, privateKeyToAccount(options.ownerPrivateKey))
    : undefined;
  const config = loadConfig({
    env: {},
    flags: {
      coordinator: options.coordinator,
      'state-dir': stateDir,
      'models-dir': options.modelsDir,
      role: options.role ?? 'cpu',
      gpu: 'cpu',
      threads: '1',
      'max-concurrency': String(options.maxConcurrency ?? 1),
      'health-port': '0',
      'drain-timeout-ms': '1000',
      'reconnect-min-ms': '50',
      ...(proof ? { 'owner-address': proof.address, 'owner-signature': proof.signature } : {}),
    },
  });
  // The daemon loads it (runtime.load) as it starts.
  const { runtime, prices } = await createRuntime(config, options.llama ? { llama: options.llama } : {});
  const served = options.wrap ? options.wrap(runtime) : runtime;
  const daemon = await startDaemon(config, {
    runtime: served,
    prices,
    hardwareSource: TEST_MACHINE,
    ...(options.llama ? { llama: options.llama } : {}),
  });
  const online = Date.now() + 30_000;
  while (!daemon.hub.connected) {
    if (Date.now() > online) throw new Error('the node daemon did not come online');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return {
    nodeId: daemon.nodeId,
    daemon,
    stop: async () => {
      await daemon.shutdown().catch(() => {});
      await served.close().catch(() => {});
      rmSync(stateDir, { recursive: true, force: true });
    },
  };
}
