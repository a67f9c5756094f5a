import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { loadNodeIdentity } from '@gpumesh/node';
import { signOwnerProof } from '@gpumesh/protocol';
import type { privateKeyToAccount } from 'viem/accounts';
import { freePort } from './free-port.js';

/** Node i asks (i + 1) × these prices, nanousd per million tokens: node 0 is the cheapest. */
const BASE_INPUT_PRICE_NANO_PER_MTOK = 100_000_000n;
const BASE_OUTPUT_PRICE_NANO_PER_MTOK = 200_000_000n;
/** A dead local node comes back after this, doubling per quick death up to the max. */
const NODE_RESTART_MIN_MS = 1_000;
const NODE_RESTART_MAX_MS = 30_000;
/** A node that ran this long before dying starts over at the minimum backoff. */
const NODE_STABLE_MS = 60_000;
const NODE_STOP_TIMEOUT_MS = 10_000;
/** The node key's file in its state directory (the daemon's nodeKeyPath). */
export const NODE_KEY_FILE = 'node.key';

const require = createRequire(import.meta.url);
const NODE_BIN = path.join(
  path.dirname(require.resolve('@gpumesh/node/package.json')),
  'bin',
  'gpumesh-node.js',
);

/** A local node: its health URL, the pid of its current process, and a stop for good. */
export type LocalNode = {
  index: number;
  healthUrl: string;
  pid(): number | undefined;
  stop(): Promise<void>;
  /** What the node is doing, when it last showed progress, and its last lines of output. */
  progress: { stage: string; at: number; lines: string[]; quickDeaths: number };
};

export type StartLocalNodeOptions = {
  dataDir: string;
  modelsDir: string;
  modelFile: string;
  modelId: string;
  /** Tokens of context the node serves the model with (its default otherwise: 4,096). */
  contextLength?: number;
  embeddingId: string;
  appUrl: string;
  index: number;
  owner: ReturnType<typeof privateKeyToAccount> | undefined;
  log: (line: string) => void;
  /** The voice runtime (espeak-ng, pocketsphinx) instead of the model. */
  voice?: boolean;
};

/**
 * Starts local node `index` and keeps it running: a node that exits on its own is started again
 * after a backoff (1 s, doubling to 30 s; back to 1 s once it ran a minute), logged. `stop()` ends
 * it for good.
 */
export async function startLocalNode(options: StartLocalNodeOptions): Promise<LocalNode> {
  const { dataDir, modelsDir, modelFile, modelId, embeddingId, appUrl, index, owner, log } = options;
  const stateDir = path.join(dataDir, 'nodes', String(index));
  await mkdir(stateDir, { recursive: true, mode: 0o700 });
  // The dev wallet owns the node: the proof that binds its node key to the wallet (its stake's tier).
  const ownerProof = owner
    ? await signOwnerProof((await loadNodeIdentity(path.join(stateDir, NODE_KEY_FILE))).nodeId, owner)
    : undefined;
  const configFile = path.join(stateDir, 'config.json');
  const factor = BigInt(index + 1);
  const config = {
    coordinator: appUrl,
    role: 'cpu',
    stateDir,
    modelsDir,
    healthPort: await freePort(),
    offerEmbeddings: !options.voice,
    ...(ownerProof ? { ownerAddress: ownerProof.address, ownerSignature: ownerProof.signature } : {}),
    ...(options.voice ? { runtime: 'voice' } : {}),
    models: options.voice
      ? []
      : [
          {
            file: modelFile,
            id: modelId,
            family: 'chat',
            embeddingId,
            ...(options.contextLength ? { contextLength: options.contextLength } : {}),
            price: {
              currency: 'USD',
              inputPerMTok: String(BASE_INPUT_PRICE_NANO_PER_MTOK * factor),
              outputPerMTok: String(BASE_OUTPUT_PRICE_NANO_PER_MTOK * factor),
            },
          },
        ],
  };
  await writeFile(configFile, `${JSON.stringify(config, null, 2)}\n`);
  let child: ChildProcess;
  let stopping = false;
  let backoffMs = NODE_RESTART_MIN_MS;
  let restart: NodeJS.Timeout | undefined;
  const progress: LocalNode['progress'] = { stage: 'starting', at: Date.now(), lines: [], quickDeaths: 0 };
  const name = options.voice ? `voice ${index}` : `node ${index}`;
  const spawnNode = () => {
    if (stopping) return;
    const startedAt = Date.now();
    child = spawn(process.execPath, [NODE_BIN, 'start', '--config', configFile, '--gpu', 'cpu'], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, NODE_ENV: 'production' },
    });
    let stderr = '';
    let partial = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
      progress.at = Date.now();
      const lines = (partial + chunk.toString()).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines.filter((l) => l.trim() !== '')) {
        progress.lines = [...progress.lines, line.slice(0, 400)].slice(-12);
        const stage = stageOf(line);
        if (stage && stage !== progress.stage) {
          progress.stage = stage;
          log(`${name.padEnd(9)} ${stage}`);
        }
      }
    });
    child.once('exit', (code, signal) => {
      if (stopping) return;
      progress.at = Date.now();
      progress.quickDeaths = Date.now() - startedAt > NODE_STABLE_MS ? 0 : progress.quickDeaths + 1;
      if (Date.now() - startedAt > NODE_STABLE_MS) backoffMs = NODE_RESTART_MIN_MS;
      const how = signal ?? `code ${code}`;
      log(`node ${index}   exited (${how}); restarting in ${backoffMs / 1000} s`);
      if (stderr.trim()) process.stderr.write(`gpumesh-node ${index}:\n${stderr}\n`);
      restart = setTimeout(spawnNode, backoffMs);
      backoffMs = Math.min(backoffMs * 2, NODE_RESTART_MAX_MS);
    });
  };
  spawnNode();
  return {
    index,
    progress,
    healthUrl: `http://127.0.0.1:${config.healthPort}/health`,
    pid: () => child.pid,
    stop: async () => {
      stopping = true;
      clearTimeout(restart);
      await stopChild(child);
    },
  };
}

/** The voice engines' binaries and model not installed here (empty: a voice node can run). */
export function missingVoiceEngines(): string[] {
  const onPath = (bin: string) =>
    (process.env.PATH ?? '').split(path.delimiter).some((dir) => existsSync(path.join(dir, bin)));
  const missing: string[] = [];
  if (!onPath('espeak-ng')) missing.push('espeak-ng');
  if (!onPath('pocketsphinx_continuous')) missing.push('pocketsphinx');
  if (!existsSync('/usr/share/pocketsphinx/model/en-us')) missing.push('pocketsphinx-en-us');
  if (!onPath('sox')) missing.push('sox');
  return missing;
}

/** A stage of a node's start, from a line of its output; undefined for other lines. */
function stageOf(line: string): string | undefined {
  if (line.startsWith('loading ')) return line;
  let msg: unknown;
  try {
    msg = (JSON.parse(line) as { msg?: unknown }).msg;
  } catch {
    return undefined;
  }
  if (msg === 'node started') return 'model loaded; connecting to the coordinator';
  if (msg === 'hub session admitted') return 'admitted by the coordinator';
  if (msg === 'reconnecting') return 'reconnecting to the coordinator';
  return undefined;
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), NODE_STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}
