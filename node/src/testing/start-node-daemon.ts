/**
 * The real node daemon (startDaemon: identity, manifest, hub session, job handling) in this
 * process, on the fixed-reply runtime: what the end-to-end suites connect as a node. Knobs the
 * runtime honours honestly (its reply, its prompt count, a failure before the first token, a pause
 * between chunks); a node that lies or breaks the protocol is the stand-in's job
 * (fixed-reply-node.ts). Exported only from `@gpumesh/node/testing`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type ModelOffer, signOwnerProof } from '@gpumesh/protocol';
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { loadConfig } from '../config.js';
import { type Daemon, startDaemon } from '../daemon.js';
import { NodeError } from '../errors.js';
import { createFixedReplyRuntime, type FixedReplyRuntimeOptions } from '../runtimes/fixed-reply-runtime.js';
import type { RuntimeJob } from '../runtimes/runtime.js';
import { TEST_MACHINE } from './test-machine.js';

export type NodeDaemonOptions = Omit<FixedReplyRuntimeOptions, 'models'> & {
  /** The coordinator's hub URL (ws://…/node). */
  url: string;
  /** The models offered, each with its price. */
  models: ModelOffer[];
  /** The node key (default: a new one). */
  privateKey?: Hex;
  /** The owner wallet's key: the manifest carries its proof. */
  ownerPrivateKey?: Hex;
  /**
   * Request members this node cannot honour: a job that sets one is refused (`invalid_request`),
   * as a runtime refuses what it cannot honour (NODE_PROTOCOL.md §9).
   */
  refuses?: readonly string[];
};

export type NodeDaemon = {
  readonly nodeId: string;
  readonly daemon: Daemon;
  /** Jobs the runtime was given so far. */
  readonly jobs: number;
  /** Jobs the coordinator cancelled (their models). */
  readonly cancelled: string[];
  /** Graceful stop: drain, bye, close. */
  stop(): Promise<void>;
  /** Abrupt death: the hub socket is destroyed without a word. */
  kill(): void;
};

/** Starts the daemon; resolves once its hub session is admitted. */
export async function startNodeDaemon(options: NodeDaemonOptions): Promise<NodeDaemon> {
  const stateDir = mkdtempSync(path.join(tmpdir(), 'gm-node-daemon-'));
  if (options.privateKey)
    writeFileSync(path.join(stateDir, 'node.key'), `${options.privateKey}\n`, { mode: 0o600 });
  const ownerProof = options.ownerPrivateKey
    ? await signOwnerProof(
        privateKeyToAccount(options.privateKey ?? (await nodeKeyOf(stateDir))).address,
        privateKeyToAccount(options.ownerPrivateKey),
      )
    : undefined;
  const config = loadConfig({
    env: {},
    flags: {
      coordinator: options.url,
      'state-dir': stateDir,
      'health-port': '0',
      'drain-timeout-ms': '1000',
      'reconnect-min-ms': '50',
      ...(ownerProof ? { 'owner-address': ownerProof.address, 'owner-signature': ownerProof.signature } : {}),
    },
  });
  let jobs = 0;
  const cancelled: string[] = [];
  const fixed = createFixedReplyRuntime({
    ...options,
    models: options.models.map(({ id, family, contextLength, maxConcurrency, sha256 }) => ({
      id,
      family: family as 'chat' | 'text' | 'embedding',
      contextLength,
      maxConcurrency,
      // The weights the offer names (the catalog lists a known hash under its canonical id).
      ...(sha256 ? { sha256 } : {}),
    })),
  });
  const runtime = {
    ...fixed,
    run: (job: RuntimeJob) => {
      const refused = options.refuses?.find((member) => job.request[member] !== undefined);
      if (refused)
        return Promise.reject(
          new NodeError('invalid_request', { detail: `${refused} is not supported by this node.` }),
        );
      jobs++;
      job.signal?.addEventListener('abort', () => cancelled.push(job.model), { once: true });
      return fixed.run(job);
    },
  };
  const prices = Object.fromEntries(
    options.models.map((m) => [m.id, { ...m.price, currency: m.price.currency as 'USD' | 'NATIVE' }]),
  );
  const daemon = await startDaemon(config, { runtime, prices, hardwareSource: TEST_MACHINE });
  const online = Date.now() + 10_000;
  while (!daemon.hub.connected) {
    if (Date.now() > online) throw new Error('the node daemon did not come online');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const cleanUp = () => rmSync(stateDir, { recursive: true, force: true });
  return {
    nodeId: daemon.nodeId,
    daemon,
    get jobs() {
      return jobs;
    },
    cancelled,
    stop: async () => {
      await daemon.shutdown();
      cleanUp();
    },
    kill: () => {
      daemon.hub.stop();
      void daemon.shutdown().finally(cleanUp);
    },
  };
}

/** The node key a fresh state directory will hold (written now, so the owner can sign for it). */
async function nodeKeyOf(stateDir: string): Promise<Hex> {
  const { generatePrivateKey } = await import('viem/accounts');
  const key = generatePrivateKey();
  writeFileSync(path.join(stateDir, 'node.key'), `${key}\n`, { mode: 0o600 });
  return key;
}
