/**
 * Raw JSON-RPC against anvil for the StakingPool contract tests: transactions from anvil's unlocked
 * dev accounts (legacy, 150 gwei, explicit gas, so a reverting call is mined with status 0 like on a
 * real chain) and batched reads (one HTTP request for a receipt, a block and many calls), which is
 * what lets the property test run thousands of transactions in seconds.
 */
import {
  type Abi,
  type Address,
  decodeFunctionResult,
  encodeDeployData,
  encodeFunctionData,
  type Hex,
  toHex,
  zeroAddress,
} from 'viem';
import { GAS_PRICE_WEI } from '../coordinator/src/chain/constants.js';
import { stakingPoolArtifact } from '../coordinator/src/chain/staking-pool-artifact.js';

export const poolAbi = stakingPoolArtifact.abi;

export type RpcRequest = { method: string; params: unknown[] };
type RpcResponse = { id: number; result?: unknown; error?: { message: string; data?: unknown } };

/** A JSON-RPC error answer; `data` holds a revert's encoded error. */
export class RpcError extends Error {
  constructor(
    message: string,
    readonly data: unknown,
  ) {
    super(message);
  }
}

/** One JSON-RPC endpoint; `batch` sends its requests in one HTTP request. */
export class Rpc {
  private nextId = 1;
  constructor(readonly url: string) {}

  async call<T = unknown>(method: string, params: unknown[] = []): Promise<T> {
    const [result] = await this.batch<[T]>([{ method, params }]);
    return result;
  }

  async batch<T extends unknown[]>(requests: RpcRequest[]): Promise<T> {
    const first = this.nextId;
    this.nextId += requests.length;
    const body = requests.map((r, i) => ({ jsonrpc: '2.0', id: first + i, ...r }));
    const response = await fetch(this.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const answers = (await response.json()) as RpcResponse[];
    const byId = new Map(answers.map((a) => [a.id, a]));
    return requests.map((r, i) => {
      const answer = byId.get(first + i);
      if (!answer || answer.error) {
        throw new RpcError(`${r.method}: ${answer?.error?.message ?? 'no answer'}`, answer?.error?.data);
      }
      return answer.result;
    }) as T;
  }

  /** Sends a legacy transaction from an unlocked account; resolves to its hash once mined (automine). */
  send(tx: { from: Address; to?: Address; data?: Hex; value?: bigint; gas: bigint }): Promise<Hex> {
    return this.call<Hex>('eth_sendTransaction', [
      {
        from: tx.from,
        ...(tx.to ? { to: tx.to } : {}),
        ...(tx.data ? { data: tx.data } : {}),
        value: toHex(tx.value ?? 0n),
        gas: toHex(tx.gas),
        gasPrice: toHex(GAS_PRICE_WEI),
      },
    ]);
  }

  /** The receipt of a sent transaction: anvil may answer eth_sendTransaction before the block is
   * in, more so on a loaded machine, so this asks again until it is (60 s is a safety net). */
  async receipt(hash: Hex): Promise<Receipt> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const receipt = await this.call<Receipt | null>('eth_getTransactionReceipt', [hash]);
      if (receipt) return receipt;
      if (Date.now() > deadline) throw new Error(`no receipt for ${hash} after 60 s`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

export type Receipt = {
  status: Hex;
  gasUsed: Hex;
  blockNumber: Hex;
  contractAddress: Address | null;
  logs: { address: Address; topics: Hex[]; data: Hex }[];
};

/** A request reading `functionName` of the pool at `block`. */
export function readRequest(pool: Address, functionName: string, args: unknown[], block: Hex): RpcRequest {
  const data = encodeFunctionData({ abi: poolAbi as Abi, functionName, args });
  return { method: 'eth_call', params: [{ to: pool, data }, block] };
}

/** Decodes the answer of a readRequest. */
export function decodeRead<T>(functionName: string, data: Hex): T {
  return decodeFunctionResult({ abi: poolAbi as Abi, functionName, data }) as T;
}

/** Calldata of a pool function. */
export function poolCall(functionName: string, args: unknown[] = []): Hex {
  return encodeFunctionData({ abi: poolAbi as Abi, functionName, args });
}

export type DeployParameters = {
  slasher: Address;
  /** May credit vault-era positions (zero address: nobody). */
  migrator?: Address;
  unbondingPeriodS: bigint;
  slashBps: bigint;
  baseApyBps: bigint;
  tierMinStake: readonly bigint[];
  tierMultiplierBps: readonly bigint[];
};

/** Deploys a StakingPool from `from`; its address and the deployment's receipt. */
export async function deployPool(
  rpc: Rpc,
  from: Address,
  p: DeployParameters,
): Promise<{ address: Address; receipt: Receipt }> {
  const data = encodeDeployData({
    abi: poolAbi,
    bytecode: stakingPoolArtifact.bytecode,
    args: [
      p.slasher,
      p.unbondingPeriodS,
      p.slashBps,
      p.baseApyBps,
      [...p.tierMinStake],
      [...p.tierMultiplierBps],
      p.migrator ?? zeroAddress,
    ],
  });
  const hash = await rpc.send({ from, data, gas: 3_000_000n });
  const receipt = await rpc.receipt(hash);
  if (receipt.status !== '0x1' || !receipt.contractAddress) throw new Error('StakingPool deployment failed');
  return { address: receipt.contractAddress, receipt };
}
