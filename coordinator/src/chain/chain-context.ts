import { type Chain, createPublicClient, http, type PublicClient } from 'viem';
import { defineGpumeshChain } from './define-chain.js';
import { createSignerQueue, type SignerQueue } from './signer-queue.js';
import type { WalletLock } from './wallet-lock.js';

/** How often viem polls for receipts and blocks; the chain makes a block every ~0.5 s. */
export const DEFAULT_POLLING_INTERVAL_MS = 250;

/** How long one JSON-RPC request may take before the chain counts as unavailable. */
export const DEFAULT_RPC_TIMEOUT_MS = 10_000;

/** Everything that talks to the chain: the viem chain, a public client, the per-wallet signer queue. */
export type ChainContext = {
  readonly chain: Chain;
  readonly client: PublicClient;
  readonly queue: SignerQueue;
};

export type CreateChainContextParameters = {
  rpcUrl: string;
  nativeSymbol: string;
  explorerUrl?: string;
  pollingIntervalMs?: number;
  /** The lock replicas share per wallet; without it the signer queue is per process only. */
  walletLock?: WalletLock;
};

/** Creates the chain client (viem, HTTP JSON-RPC) and an empty signer queue. No I/O until used. */
export function createChainContext(parameters: CreateChainContextParameters): ChainContext {
  const chain = defineGpumeshChain(parameters);
  const client = createPublicClient({
    chain,
    transport: http(parameters.rpcUrl, { timeout: DEFAULT_RPC_TIMEOUT_MS, retryCount: 1 }),
    pollingInterval: parameters.pollingIntervalMs ?? DEFAULT_POLLING_INTERVAL_MS,
  });
  return {
    chain,
    client,
    queue: createSignerQueue(parameters.walletLock ? { lock: parameters.walletLock } : {}),
  };
}
