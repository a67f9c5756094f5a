import { type Chain, defineChain } from 'viem';
import { CHAIN_ID, NATIVE_DECIMALS } from './constants.js';

export type DefineGpumeshChainParameters = {
  /** JSON-RPC URL of the chain. */
  rpcUrl: string;
  /** Symbol (and name) of the native token. */
  nativeSymbol: string;
  /** Block explorer, when there is one. */
  explorerUrl?: string;
};

/** The network's EVM (chain id 800000, native token with 18 decimals) as a viem chain. */
export function defineGpumeshChain({
  rpcUrl,
  nativeSymbol,
  explorerUrl,
}: DefineGpumeshChainParameters): Chain {
  return defineChain({
    id: CHAIN_ID,
    name: 'gpumesh',
    nativeCurrency: { name: nativeSymbol, symbol: nativeSymbol, decimals: NATIVE_DECIMALS },
    rpcUrls: { default: { http: [rpcUrl] } },
    ...(explorerUrl ? { blockExplorers: { default: { name: 'explorer', url: explorerUrl } } } : {}),
  });
}
