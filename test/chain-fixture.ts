/**
 * Shared by the chain end-to-end tests: a devnet (real anvil), the coordinator config that points
 * at it, and chain read-backs. One devnet per test file.
 */
import type { FastifyInstance } from 'fastify';
import { type Address, erc20Abi, type Hex, type Transaction } from 'viem';
import type { StableSymbol } from '../coordinator/src/chain/constants.js';
import { type Devnet, startDevnet } from '../coordinator/src/chain/devnet.js';
import { stakingPoolArtifact } from '../coordinator/src/chain/staking-pool-artifact.js';

/** The devnet's fixed native price in these tests: 2.5 USD per token. */
export const TEST_NATIVE_USD_PRICE_NANO = 2_500_000_000n;
export const TEST_NATIVE_SYMBOL = 'TOK';

export { type Devnet, startDevnet };

/** Coordinator config overrides for a devnet (chain section, its staking pool and slasher + staking). */
export function chainOverrides(devnet: Devnet, extra: { chain?: object; staking?: object } = {}) {
  return {
    chain: {
      rpcUrl: devnet.rpcUrl,
      nativeSymbol: TEST_NATIVE_SYMBOL,
      nativeUsdPriceNano: TEST_NATIVE_USD_PRICE_NANO,
      confirmations: 1,
      tokens: { ...devnet.tokens },
      stakingVaultKey: devnet.vaults.staking.privateKey,
      rewardsVaultKey: devnet.vaults.rewards.privateKey,
      treasuryKey: devnet.treasury.privateKey,
      stakingPool: devnet.stakingPool,
      slasherKey: devnet.vaults.staking.privateKey,
      ...extra.chain,
    },
    ...(extra.staking ? { staking: extra.staking } : {}),
  };
}

/** GET /api/keys/proxy for a JWT. */
export async function proxyAddressOf(app: FastifyInstance, token: string): Promise<Address> {
  const response = await app.inject({
    method: 'GET',
    url: '/api/keys/proxy',
    headers: { authorization: `Bearer ${token}` },
  });
  if (response.statusCode !== 200) throw new Error(`proxy: ${response.statusCode} ${response.body}`);
  return (response.json() as { proxyAddress: Address }).proxyAddress;
}

/** A stable's balance. */
export function tokenBalance(devnet: Devnet, symbol: StableSymbol, owner: Address): Promise<bigint> {
  return devnet.context.client.readContract({
    address: devnet.tokens[symbol],
    abi: erc20Abi,
    functionName: 'balanceOf',
    args: [owner],
  });
}

/** Every transaction on the chain so far, read back block by block. */
export async function allTransactions(devnet: Devnet): Promise<Transaction[]> {
  const { client } = devnet.context;
  const head = await client.getBlockNumber({ cacheTime: 0 }); // not viem's head of up to 250 ms ago
  const blocks = await Promise.all(
    Array.from({ length: Number(head) + 1 }, (_, i) =>
      client.getBlock({ blockNumber: BigInt(i), includeTransactions: true }),
    ),
  );
  return blocks.flatMap((block) => block.transactions);
}

/** The chain's copy of one transaction. */
export function transactionOf(devnet: Devnet, hash: Hex): Promise<Transaction> {
  return devnet.context.client.getTransaction({ hash });
}

/** Moves the chain's clock `seconds` ahead and mines a block there (anvil). */
export async function advanceChainTime(devnet: Devnet, seconds: number): Promise<void> {
  const rpc = async (method: string, params: unknown[]) => {
    const response = await fetch(devnet.rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    const body = (await response.json()) as { error?: { message: string } };
    if (body.error) throw new Error(`${method}: ${body.error.message}`);
  };
  await rpc('evm_increaseTime', [seconds]);
  await rpc('evm_mine', []);
}

/** The staking pool's view of an owner (by its account in the pool: the proxy wallet). */
export async function poolPosition(devnet: Devnet, account: Address) {
  const [staked, unbonding, withdrawable, claimable] = await devnet.context.client.readContract({
    address: devnet.stakingPool,
    abi: stakingPoolArtifact.abi,
    functionName: 'positionOf',
    args: [account],
  });
  return { staked, unbonding, withdrawable, claimable };
}
