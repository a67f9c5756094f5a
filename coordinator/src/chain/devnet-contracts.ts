import {
  type Address,
  encodeDeployData,
  encodeFunctionData,
  getAddress,
  type LocalAccount,
  parseEther,
} from 'viem';
import type { ChainContext } from './chain-context.js';
import { STABLE_SYMBOLS, type StableSymbol } from './constants.js';
import { deployStakingPool, type StakingPoolParameters } from './deploy-staking-pool.js';
import { sendTransaction } from './send-transaction.js';
import { stableTokenArtifact } from './stable-token-artifact.js';
import { stakingPoolArtifact } from './staking-pool-artifact.js';

const TOKEN_NAMES: Readonly<Record<StableSymbol, string>> = {
  'USD.s': 'gpumesh USD',
  'USDT.s': 'gpumesh Tether USD',
  'USDC.s': 'gpumesh USD Coin',
};

/** What the devnet puts in the staking pool's rewards pool, in whole tokens. */
export const DEVNET_REWARDS_POOL_TOKENS = 100_000;

/** Deploys USD.s, USDT.s and USDC.s from `deployer`; resolves with their addresses. */
export async function deployTokens(
  context: ChainContext,
  deployer: LocalAccount,
): Promise<Record<StableSymbol, Address>> {
  const deployments = await Promise.all(
    STABLE_SYMBOLS.map((symbol) =>
      sendTransaction(context, {
        account: deployer,
        data: encodeDeployData({
          abi: stableTokenArtifact.abi,
          bytecode: stableTokenArtifact.bytecode,
          args: [TOKEN_NAMES[symbol], symbol],
        }),
      }),
    ),
  );
  return Object.fromEntries(
    STABLE_SYMBOLS.map((symbol, i) => [symbol, getAddress(deployments[i]!.receipt.contractAddress!)]),
  ) as Record<StableSymbol, Address>;
}

/** Deploys StakingPool from `deployer` and funds its rewards pool from `funder`; its address. */
export async function deployDevnetPool(
  context: ChainContext,
  { deployer, funder }: { deployer: LocalAccount; funder: LocalAccount },
  parameters: StakingPoolParameters,
): Promise<Address> {
  const pool = await deployStakingPool(context, deployer, parameters);
  await sendTransaction(context, {
    account: funder,
    to: pool,
    value: parseEther(String(DEVNET_REWARDS_POOL_TOKENS)),
    data: encodeFunctionData({ abi: stakingPoolArtifact.abi, functionName: 'fundRewards' }),
  });
  return pool;
}
