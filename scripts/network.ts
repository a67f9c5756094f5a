/**
 * The whole local network in one call: the devnet chain (anvil, chain 800000), one coordinator
 * (SQLite in the data directory) and N local CPU nodes serving the generated tiny model, plus a
 * funded dev wallet with an API key, so the printed example works as printed.
 *
 * A second start with the same data directory reuses everything: the chain state, the database,
 * the node keys and the dev API key, so balances and keys survive restarts.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { devnetChainConfig, startDevnet } from '@gpumesh/coordinator/devnet';
import { type RunningServer, startServer } from '@gpumesh/coordinator/server';
import { loadNodeIdentity, pullModel, tinyModelPath } from '@gpumesh/node';
import { signOwnerProof } from '@gpumesh/protocol';
import type { Address, Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { signIn } from './demo-client.js';

export const DEFAULT_APP_PORT = 8080;
export const DEFAULT_RPC_PORT = 8545;
export const DEFAULT_DATA_DIR = './.gpumesh';
export const NETWORK_FILE_NAME = 'network.json';
/** The tiny model's ids on the network. */
export const CHAT_MODEL_ID = 'gpumesh/tiny-chat';
export const EMBEDDING_MODEL_ID = 'gpumesh/tiny-embed';
/** Node i asks (i + 1) × these prices, nanousd per million tokens: node 0 is the cheapest. */
const BASE_INPUT_PRICE_NANO_PER_MTOK = 100_000_000n;
const BASE_OUTPUT_PRICE_NANO_PER_MTOK = 200_000_000n;
/** The dev wallet tops itself up to this many USD of credits on start. */
const DEV_CREDIT_TARGET_USD = 10;
/**
 * A node that shows no progress (no output, no new stage) this long while not yet online has
 * stalled: npm start stops and shows its last lines. Load is not failure: a slow machine stretches
 * each step, and any output counts as progress.
 */
const NODE_STALL_MS = 300_000;
/** Quick deaths in a row after which a node is failing, not starting. */
const NODE_MAX_QUICK_DEATHS = 5;
const NODE_STOP_TIMEOUT_MS = 10_000;
const POLL_MS = 200;

export type StartNetworkOptions = {
  dataDir?: string;
  /** Coordinator port; 0 picks a free one. */
  port?: number;
  /** Devnet RPC port; 0 picks a free one. Ignored with rpcUrl. */
  rpcPort?: number;
  /** Local nodes to start (0 for none). */
  nodes?: number;
  /**
   * Also start a voice node (espeak-ng speech, pocketsphinx transcription) when the engines are
   * installed and nodes > 0; default true.
   */
  voice?: boolean;
  /**
   * A model to pull and serve instead of the generated one (`hf:<user>/<repo>/<file>.gguf`,
   * `hf:<user>/<repo>:<quant>`, `https://…/x.gguf`), checked against the coordinator's catalog.
   */
  model?: string;
  /** Use this chain instead of starting the devnet (its addresses come from the environment). */
  rpcUrl?: string;
  /** One line of progress; default silent. */
  log?: (line: string) => void;
  /** Environment passed to the coordinator for the settings not chosen here. */
  env?: Readonly<Record<string, string | undefined>>;
  /** The most to wait for the nodes to come online, ms; default: as long as they make progress. */
  waitTimeoutMs?: number;
};

/** What `npm start` writes to `<dataDir>/network.json` (devnet only: it holds the dev wallet key). */
export type NetworkInfo = {
  appUrl: string;
  routerUrl: string;
  rpcUrl: string;
  nodeWsUrl: string;
  chainId: number;
  nativeSymbol: string;
  tokens: Record<string, Address>;
  models: { chat: string; embedding: string; speech?: string; transcription?: string };
  devWallet?: { address: Address; privateKey: Hex };
  apiKey?: string;
  /** The coordinator's data directory (its SQLite store, unless DATABASE_URL is set). */
  dataDir: string;
  /** The staking vault's address, for the reconciliation check. */
  stakingVault?: Address;
};

/** Whether the coordinator serves the node package install.sh installs (`GET /install/packages.json`). */
export type PackageServed = { ok: true; installUrl: string } | { ok: false; reason: string };

export type RunningNetwork = NetworkInfo & {
  /**
   * Settles once `/install/packages.json` answers 200 (the package is packed in the background
   * after start, about 20 s on a quiet machine; until then it answers 503), or with why it never
   * will (the packer failed, or the network stopped first). Never rejects.
   */
  packageServed: Promise<PackageServed>;
  stop(): Promise<void>;
};

/** Starts the chain, the coordinator and the nodes; resolves once a node serves the chat model. */
export async function startNetwork(options: StartNetworkOptions = {}): Promise<RunningNetwork> {
  const log = options.log ?? (() => {});
  const dataDir = path.resolve(options.dataDir ?? DEFAULT_DATA_DIR);
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const stops: (() => Promise<void>)[] = [];
  const stop = async (): Promise<void> => {
    for (const s of stops.splice(0).reverse()) await s().catch(() => {});
  };

  try {
    // 1. The chain.
    const devnet = options.rpcUrl
      ? undefined
      : await startDevnet({
          port: options.rpcPort ?? DEFAULT_RPC_PORT,
          dataDir,
          persist: true,
          env: options.env,
        });
    if (devnet) stops.push(() => devnet.stop());
    const rpcUrl = options.rpcUrl ?? devnet!.rpcUrl;
    log(devnet ? `chain     ${rpcUrl} (devnet, chain ${devnet.chainId})` : `chain     ${rpcUrl}`);

    // 2. The coordinator, in this process.
    // Port 0 means "any free port": resolve it now so the coordinator's public URLs are right.
    const port = options.port === 0 ? await freePort() : (options.port ?? DEFAULT_APP_PORT);
    // The node package install.sh installs from this coordinator, packed in the background (about
    // 20 s; until then /install/packages.json answers 503 with Retry-After).
    const nodePackagesDir = path.join(dataDir, 'packages');
    const packing = spawn(
      process.execPath,
      [fileURLToPath(new URL('./pack-node-packages.mjs', import.meta.url)), nodePackagesDir],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let packingErrors = '';
    packing.stderr?.on('data', (chunk: Buffer) => {
      packingErrors = (packingErrors + chunk.toString()).slice(-2000);
    });
    // The packer's exit is the event that decides: no deadline, a loaded machine packs slower.
    const packed = new Promise<number | NodeJS.Signals | null>((resolve) => {
      packing.once('exit', (code, signal) => resolve(code ?? signal));
      packing.once('error', () => resolve(null));
    });
    stops.push(async () => {
      if (packing.exitCode === null) packing.kill();
    });
    // The generated model, written before the coordinator starts: it verifies nodes claiming it
    // itself (trust.verifierModelsDir) while no network node holds it.
    const tinyModelsDir = path.join(dataDir, 'models');
    if (!options.model) await tinyModelPath({ dir: tinyModelsDir });
    const server: RunningServer = await startServer({
      argv: [],
      env: { GPUMESH_LOG_LEVEL: 'warn', ...options.env },
      overrides: {
        dataDir,
        port,
        nodePackagesDir,
        ...(devnet ? devnetChainConfig(devnet) : { chain: { rpcUrl } }),
        // The tiny model earns fractions of a cent: on the local network any whole micro-USD pays out.
        ...(devnet ? { payouts: { minNano: 1_000n } } : {}),
        // A newcomer without a browser wallet signs in to the dashboard as the dev wallet.
        ...(devnet ? { devWallets: [devnet.accounts[0]!.privateKey] } : {}),
        ...(options.model ? {} : { trust: { verifierModelsDir: tinyModelsDir } }),
      },
    });
    stops.push(() => server.close());
    const appUrl = server.config.publicUrl.replace(/\/$/, '');
    const routerUrl = server.config.routerUrl.replace(/\/$/, '');
    const nodeWsUrl = `${appUrl.replace(/^http/, 'ws')}/node`;
    log(`app       ${appUrl}`);
    log('package   packing the node package install.sh installs (in the background)');
    const packageServed = packed.then(async (how): Promise<PackageServed> => {
      if (how !== 0) {
        const why = packingErrors.trim().split('\n').slice(-5).join('\n');
        return {
          ok: false,
          reason: `packing it failed (${how ?? 'did not start'})${why ? `:\n${why}` : ''}`,
        };
      }
      const listed = await fetch(`${appUrl}/install/packages.json`).catch((error: Error) => error);
      if (listed instanceof Error)
        return { ok: false, reason: `${appUrl} did not answer: ${listed.message}` };
      if (listed.status !== 200)
        return { ok: false, reason: `/install/packages.json answers ${listed.status}` };
      return { ok: true, installUrl: `${appUrl}/install.sh` };
    });

    const info: NetworkInfo = {
      appUrl,
      routerUrl,
      rpcUrl,
      nodeWsUrl,
      chainId: server.config.chain.chainId,
      nativeSymbol: server.config.chain.nativeSymbol,
      tokens: { ...(server.config.chain.tokens as Record<string, Address>) },
      models: { chat: CHAT_MODEL_ID, embedding: EMBEDDING_MODEL_ID },
      dataDir,
      ...(devnet ? { stakingVault: devnet.vaults.staking.address } : {}),
    };

    // 3. The dev wallet (devnet only): signed in, an API key, credits, and a stake that makes it a
    //    silver owner, so the nodes it owns get a real node's concurrency (an unstaked one takes 1).
    if (devnet) {
      const previous = await readNetworkFile(dataDir);
      const dev = devnet.accounts[0]!;
      info.devWallet = { address: dev.address, privateKey: dev.privateKey };
      const client = await signIn(info, privateKeyToAccount(dev.privateKey));
      info.apiKey = previous?.apiKey ?? (await client.createKey('npm-start')).key;
      const { credits } = await client.user();
      if (credits.balance < DEV_CREDIT_TARGET_USD / 2) {
        const hash = await client.sendStable(
          'USDC.s',
          await client.proxyAddress(),
          String(DEV_CREDIT_TARGET_USD),
        );
        await client.topup(hash, 'USDC.s', DEV_CREDIT_TARGET_USD);
      }
      const { stake } = await client.tx<{ stake: { quantity: string } }>('chain_getStake', [dev.address]);
      if (Number.parseFloat(stake.quantity) < DEV_STAKE_TOKENS) {
        await client.sendNative(await client.proxyAddress(), String(DEV_STAKE_TOKENS + 1)); // plus gas
        await client.tx('chain_stake', [dev.address, `${DEV_STAKE_TOKENS}.0000 ${info.nativeSymbol}`]);
      }
      log(`owner     ${dev.address} (dev wallet, staked ${DEV_STAKE_TOKENS} ${info.nativeSymbol})`);
    }
    // 4. The nodes, each its own process, serving the generated model at its own price, owned by the
    //    dev wallet on the devnet, and restarted when one dies.
    //    With --model, the pulled model instead (its own folder, so it is the only one served).
    const nodeCount = options.nodes ?? 1;
    const served = options.model
      ? await pullServedModel(options.model, path.join(dataDir, 'pulled-models'), appUrl, log)
      : {
          modelsDir: tinyModelsDir,
          modelFile: path.basename(await tinyModelPath({ dir: tinyModelsDir })),
          id: CHAT_MODEL_ID,
          embeddingId: EMBEDDING_MODEL_ID,
          catalogId: CHAT_MODEL_ID as string | undefined,
          catalogEmbeddingId: EMBEDDING_MODEL_ID as string | undefined,
        };
    const { modelsDir, modelFile } = served;
    const nodes: LocalNode[] = [];
    stops.push(() => Promise.all(nodes.map((n) => n.stop())).then(() => {}));
    const owner = info.devWallet ? privateKeyToAccount(info.devWallet.privateKey) : undefined;
    for (let i = 0; i < nodeCount; i++) {
      nodes.push(
        await startNode({
          dataDir,
          modelsDir,
          modelFile,
          modelId: served.id,
          embeddingId: served.embeddingId,
          appUrl,
          index: i,
          owner,
          log,
        }),
      );
    }
    // The ids the coordinator lists: the catalog's for known weights, else node 0's own scope.
    if (nodeCount > 0) {
      const scope = (
        await loadNodeIdentity(path.join(dataDir, 'nodes', '0', NODE_KEY_FILE))
      ).nodeId.toLowerCase();
      info.models = {
        chat: served.catalogId ?? `${scope}/${served.id}`,
        embedding: served.catalogEmbeddingId ?? `${scope}/${served.embeddingId}`,
      };
    }
    // 5. The voice node: the built-in CPU engines from Debian packages, when they are installed.
    if (nodeCount > 0 && options.voice !== false) {
      const missing = missingVoiceEngines();
      if (missing.length === 0) {
        nodes.push(
          await startNode({
            dataDir,
            modelsDir,
            modelFile,
            modelId: served.id,
            embeddingId: served.embeddingId,
            appUrl,
            index: nodeCount,
            owner,
            log,
            voice: true,
          }),
        );
        info.models = { ...info.models, speech: 'espeak-ng', transcription: 'pocketsphinx-en-us' };
      } else {
        log(
          `voice     no voice node: ${missing.join(', ')} not installed (apt-get install espeak-ng pocketsphinx pocketsphinx-en-us sox)`,
        );
      }
    }
    if (nodeCount > 0) {
      // A node's health endpoint answers 200 only while its hub socket is open and its runtime alive.
      await waitForNodes(nodes, options.waitTimeoutMs);
      log(`nodes     ${nodeCount} serving ${info.models.chat} and ${info.models.embedding}`);
      if (info.models.speech)
        log(`voice     1 serving ${info.models.speech} and ${info.models.transcription}`);
    }

    const file = path.join(dataDir, NETWORK_FILE_NAME);
    await writeFile(file, `${JSON.stringify(info, null, 2)}\n`, { mode: 0o600 });
    await chmod(file, 0o600);
    return { ...info, packageServed, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * `npm start -- --model <ref>`: pulls the model (node-llama-cpp's downloader, progress logged every
 * 10 %) and checks it against the coordinator's catalog, which gives its canonical ids.
 */
async function pullServedModel(ref: string, modelsDir: string, appUrl: string, log: (line: string) => void) {
  const res = await fetch(`${appUrl}/api/models/catalog`);
  const { models } = (await res.json()) as {
    models: { id: string; embeddingId?: string; files: { file: string; sha256: string }[] }[];
  };
  const catalog = models.flatMap((m) =>
    m.files.map((f) => ({ modelId: m.id, file: f.file, sha256: f.sha256 })),
  );
  let shown = -1;
  const pulled = await pullModel({
    ref,
    modelsDir,
    catalog,
    onProgress: ({ downloadedBytes, totalBytes }) => {
      const step = totalBytes > 0 ? Math.floor((downloadedBytes / totalBytes) * 10) : 0;
      if (step !== shown) log(`pulling   ${ref}: ${step * 10}%`);
      shown = step;
    },
  });
  const known = models.find((m) => m.id === pulled.modelId);
  log(
    `model     ${path.basename(pulled.path)} (${pulled.verified === 'catalog' ? `catalog: ${pulled.modelId}` : 'not in the catalog: unverified'})`,
  );
  const id = path.basename(pulled.path, '.gguf');
  return {
    modelsDir,
    modelFile: path.basename(pulled.path),
    id,
    embeddingId: `${id}-embed`,
    catalogId: known?.id,
    catalogEmbeddingId: known?.embeddingId,
  };
}

/** Reads `<dataDir>/network.json` of an earlier start, if any. */
export async function readNetworkFile(dataDir: string): Promise<NetworkInfo | undefined> {
  const file = path.join(dataDir, NETWORK_FILE_NAME);
  if (!existsSync(file)) return undefined;
  return JSON.parse(await readFile(file, 'utf8')) as NetworkInfo;
}

const require = createRequire(import.meta.url);
const NODE_BIN = path.join(
  path.dirname(require.resolve('@gpumesh/node/package.json')),
  'bin',
  'gpumesh-node.js',
);

/**
 * Starts local node `index` and keeps it running: a node that exits on its own is started again
 * after a backoff (1 s, doubling to 30 s; back to 1 s once it ran a minute), logged. `stop()` ends
 * it for good.
 */
async function startNode(options: {
  dataDir: string;
  modelsDir: string;
  modelFile: string;
  modelId: string;
  embeddingId: string;
  appUrl: string;
  index: number;
  owner: ReturnType<typeof privateKeyToAccount> | undefined;
  log: (line: string) => void;
  /** The voice runtime (espeak-ng, pocketsphinx) instead of the model. */
  voice?: boolean;
}): Promise<LocalNode> {
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
function missingVoiceEngines(): string[] {
  const onPath = (bin: string) =>
    (process.env.PATH ?? '').split(path.delimiter).some((dir) => existsSync(path.join(dir, bin)));
  const missing: string[] = [];
  if (!onPath('espeak-ng')) missing.push('espeak-ng');
  if (!onPath('pocketsphinx_continuous')) missing.push('pocketsphinx');
  if (!existsSync('/usr/share/pocketsphinx/model/en-us')) missing.push('pocketsphinx-en-us');
  if (!onPath('sox')) missing.push('sox');
  return missing;
}

/** A local node: its health URL, the pid of its current process, and a stop for good. */
type LocalNode = {
  index: number;
  healthUrl: string;
  pid(): number | undefined;
  stop(): Promise<void>;
  /** What the node is doing, when it last showed progress, and its last lines of output. */
  progress: { stage: string; at: number; lines: string[]; quickDeaths: number };
};

/**
 * Until every node answers its health check: as long as each shows progress (output, a new stage),
 * or up to `timeoutMs` when given. A node that stalls or keeps dying fails the start with its last
 * lines.
 */
async function waitForNodes(nodes: LocalNode[], timeoutMs: number | undefined): Promise<void> {
  const started = Date.now();
  for (;;) {
    const healthy = await Promise.all(nodes.map((n) => isHealthy(n.healthUrl)));
    if (healthy.every(Boolean)) return;
    const now = Date.now();
    for (const [i, node] of nodes.entries()) {
      if (healthy[i]) continue;
      const { stage, at, lines, quickDeaths } = node.progress;
      const why =
        quickDeaths >= NODE_MAX_QUICK_DEATHS
          ? `node ${node.index} exited ${quickDeaths} times in a row while starting`
          : now - at > NODE_STALL_MS
            ? `node ${node.index} made no progress for ${Math.round((now - at) / 1000)} s (last: ${stage})`
            : timeoutMs !== undefined && now - started > timeoutMs
              ? `node ${node.index} was not online after --wait-timeout ${Math.round(timeoutMs / 1000)} s (last: ${stage})`
              : undefined;
      if (why) throw new Error(`${why}; its last lines:\n${lines.join('\n') || '(none)'}`);
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
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

/** A dead local node comes back after this, doubling per quick death up to the max. */
const NODE_RESTART_MIN_MS = 1_000;
const NODE_RESTART_MAX_MS = 30_000;
/** A node that ran this long before dying starts over at the minimum backoff. */
const NODE_STABLE_MS = 60_000;
/** The node key's file in its state directory (the daemon's nodeKeyPath). */
const NODE_KEY_FILE = 'node.key';
/** The dev wallet's stake: silver (1,000), so its nodes take the jobs their cores can. */
const DEV_STAKE_TOKENS = 1_000;

async function isHealthy(url: string): Promise<boolean> {
  const response = await fetch(url).catch(() => undefined);
  return response?.status === 200;
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), NODE_STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}

/** A TCP port that was free a moment ago. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}
