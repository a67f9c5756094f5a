/**
 * The whole local network in one call: the devnet chain (anvil, chain 800000), one coordinator
 * (SQLite in the data directory) and N local CPU nodes serving gpumesh/mini-chat (the small chat
 * model trained in this repository, models/mini-chat) or the model asked for, plus a
 * funded dev wallet with an API key, so the printed example works as printed.
 *
 * A second start with the same data directory reuses everything: the chain state, the database,
 * the node keys and the dev API key, so balances and keys survive restarts.
 */
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { devnetChainConfig, startDevnet } from '@gpumesh/coordinator/devnet';
import { type RunningServer, startServer } from '@gpumesh/coordinator/server';
import { loadNodeIdentity, tinyModelPath } from '@gpumesh/node';
import type { Address, Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { freePort } from './free-port.js';
import { MINI_CHAT_QUANTS, miniChatModel } from './mini-chat-model.js';
import {
  CHAT_MODEL_ID,
  DEFAULT_APP_PORT,
  DEFAULT_DATA_DIR,
  DEFAULT_RPC_PORT,
  EMBEDDING_MODEL_ID,
  MINI_CHAT_ID,
} from './network-defaults.js';
import { type PackageServed, packNodePackage } from './pack-node-package.js';
import { pullServedModel, type ServedModel } from './pull-served-model.js';
import { setUpDevWallet } from './set-up-dev-wallet.js';
import { type LocalNode, missingVoiceEngines, NODE_KEY_FILE, startLocalNode } from './start-local-node.js';
import { waitForNodes } from './wait-for-nodes.js';

export { CHAT_MODEL_ID, DEFAULT_APP_PORT, DEFAULT_DATA_DIR, DEFAULT_RPC_PORT, EMBEDDING_MODEL_ID };
export const NETWORK_FILE_NAME = 'network.json';

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
   * The model the nodes serve: gpumesh/mini-chat (default: the committed files, checked against
   * the catalog's hashes), gpumesh/tiny-chat (the generated random-weight model: fast, its replies
   * noise), or one to pull (a catalog id, `hf:<user>/<repo>/<file>.gguf`, `hf:<user>/<repo>:<quant>`,
   * `https://…/x.gguf`), checked against the coordinator's catalog.
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
  /** StakingPool.sol (issue 43): an owner reads its position there without the coordinator. */
  stakingPool?: Address;
};

export type { PackageServed };

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
    const packing = packNodePackage(nodePackagesDir);
    stops.push(() => packing.stop());
    // The local model, written before the coordinator starts: it verifies nodes claiming it
    // itself (trust.verifierModelsDir) while no network node holds it. Of mini-chat it holds every
    // pinned file, not only the served one, so a cheaper file behind the claim is caught here too
    // (in their own folder: the local nodes serve every file of theirs).
    const modelRef = options.model ?? MINI_CHAT_ID;
    const localModelsDir = path.join(dataDir, 'models');
    const local =
      modelRef === MINI_CHAT_ID
        ? await miniChatModel(localModelsDir)
        : modelRef === CHAT_MODEL_ID
          ? await tinyServedModel(localModelsDir)
          : undefined;
    let verifierModelsDir = localModelsDir;
    if (modelRef === MINI_CHAT_ID) {
      verifierModelsDir = path.join(dataDir, 'verifier-models');
      for (const quant of MINI_CHAT_QUANTS) await miniChatModel(verifierModelsDir, quant);
    }
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
        ...(local ? { trust: { verifierModelsDir } } : {}),
      },
    });
    stops.push(() => server.close());
    const appUrl = server.config.publicUrl.replace(/\/$/, '');
    const routerUrl = server.config.routerUrl.replace(/\/$/, '');
    const nodeWsUrl = `${appUrl.replace(/^http/, 'ws')}/node`;
    log(`app       ${appUrl}`);
    log('package   packing the node package install.sh installs (in the background)');
    const packageServed = packing.servedBy(appUrl);

    const info: NetworkInfo = {
      appUrl,
      routerUrl,
      rpcUrl,
      nodeWsUrl,
      chainId: server.config.chain.chainId,
      nativeSymbol: server.config.chain.nativeSymbol,
      tokens: { ...(server.config.chain.tokens as Record<string, Address>) },
      models: {
        chat: local?.catalogId ?? CHAT_MODEL_ID,
        embedding: local?.catalogEmbeddingId ?? EMBEDDING_MODEL_ID,
      },
      dataDir,
      ...(devnet ? { stakingVault: devnet.vaults.staking.address, stakingPool: devnet.stakingPool } : {}),
    };

    // 3. The dev wallet (devnet only): signed in, an API key, credits, and a stake that makes it a
    //    silver owner, so the nodes it owns get a real node's concurrency (an unstaked one takes 1).
    if (devnet) await setUpDevWallet(info, devnet, (await readNetworkFile(dataDir))?.apiKey, log);
    // 4. The nodes, each its own process, serving the generated model at its own price, owned by the
    //    dev wallet on the devnet, and restarted when one dies.
    //    With --model, the pulled model instead (its own folder, so it is the only one served).
    const nodeCount = options.nodes ?? 1;
    const served: ServedModel =
      local ?? (await pullServedModel(modelRef, path.join(dataDir, 'pulled-models'), appUrl, log));
    const nodes: LocalNode[] = [];
    stops.push(() => Promise.all(nodes.map((n) => n.stop())).then(() => {}));
    const owner = info.devWallet ? privateKeyToAccount(info.devWallet.privateKey) : undefined;
    const nodeOptions = {
      dataDir,
      modelsDir: served.modelsDir,
      modelFile: served.modelFile,
      modelId: served.id,
      embeddingId: served.embeddingId,
      ...(served.contextLength ? { contextLength: served.contextLength } : {}),
      appUrl,
      owner,
      log,
    };
    for (let i = 0; i < nodeCount; i++) nodes.push(await startLocalNode({ ...nodeOptions, index: i }));
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
        nodes.push(await startLocalNode({ ...nodeOptions, index: nodeCount, voice: true }));
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

/** The generated random-weight model (`--model gpumesh/tiny-chat`), written into `modelsDir`. */
async function tinyServedModel(modelsDir: string): Promise<ServedModel> {
  return {
    modelsDir,
    modelFile: path.basename(await tinyModelPath({ dir: modelsDir })),
    id: CHAT_MODEL_ID,
    embeddingId: EMBEDDING_MODEL_ID,
    catalogId: CHAT_MODEL_ID,
    catalogEmbeddingId: EMBEDDING_MODEL_ID,
  };
}

/** Reads `<dataDir>/network.json` of an earlier start, if any. */
export async function readNetworkFile(dataDir: string): Promise<NetworkInfo | undefined> {
  const file = path.join(dataDir, NETWORK_FILE_NAME);
  if (!existsSync(file)) return undefined;
  return JSON.parse(await readFile(file, 'utf8')) as NetworkInfo;
}
