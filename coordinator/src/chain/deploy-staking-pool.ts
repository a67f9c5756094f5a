import { type Address, encodeDeployData, getAddress, type LocalAccount, zeroAddress } from 'viem';
import type { ChainContext } from './chain-context.js';
import { sendTransaction } from './send-transaction.js';
import { stakingPoolArtifact } from './staking-pool-artifact.js';
import { DEFAULT_BASE_APY_BPS, DEFAULT_TIERS, type Tier } from './tiers.js';

/** What StakingPool.sol fixes at deployment (nothing can change it later). */
export type StakingPoolParameters = {
  /** The only address that may slash: the coordinator's conviction key. */
  slasher: Address;
  /** The only address that may credit vault-era positions (the old staking vault); none when absent. */
  migrator?: Address;
  unbondingPeriodS: number;
  /** The most one slash may take (basis points). */
  slashBps: number;
  baseApyBps: number;
  /** The ladder, lowest first, the first at 0. */
  tiers: readonly Tier[];
};

/** The defaults of the coordinator's config: 7-day unbonding, 10 % slashes, 5 % APY, design.md's ladder. */
export const DEFAULT_STAKING_POOL_PARAMETERS: Omit<StakingPoolParameters, 'slasher' | 'migrator'> = {
  unbondingPeriodS: 7 * 24 * 60 * 60,
  slashBps: 1_000,
  baseApyBps: DEFAULT_BASE_APY_BPS,
  tiers: DEFAULT_TIERS,
};

/** Deploys StakingPool from `deployer` (a legacy transaction; waits for the receipt); its address. */
export async function deployStakingPool(
  context: ChainContext,
  deployer: LocalAccount,
  parameters: StakingPoolParameters,
): Promise<Address> {
  const { receipt } = await sendTransaction(context, {
    account: deployer,
    data: encodeDeployData({
      abi: stakingPoolArtifact.abi,
      bytecode: stakingPoolArtifact.bytecode,
      args: [
        parameters.slasher,
        BigInt(parameters.unbondingPeriodS),
        BigInt(parameters.slashBps),
        BigInt(parameters.baseApyBps),
        parameters.tiers.map((t) => t.minStakeWei),
        parameters.tiers.map((t) => BigInt(t.multiplierBps)),
        parameters.migrator ?? zeroAddress,
      ],
    }),
  });
  if (!receipt.contractAddress) throw new Error('StakingPool deployment has no contract address');
  return getAddress(receipt.contractAddress);
}
