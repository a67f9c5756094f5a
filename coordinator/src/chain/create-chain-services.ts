import type { Kysely } from 'kysely';
import { type Address, getAddress, type Hex, type LocalAccount } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { CoordinatorConfig } from '../config.js';
import type { Database } from '../db/schema.js';
import { ApiError } from '../errors.js';
import { type ChainContext, createChainContext } from './chain-context.js';
import { STABLE_SYMBOLS, type StableSymbol } from './constants.js';
import { StakingPool } from './staking-pool.js';
import { type Tier, tiersFromConfig } from './tiers.js';
import { createWalletLock } from './wallet-lock.js';

/** A vault: an EOA; the coordinator holds its key when it must pay out of it. */
export type Vault = { readonly address: Address; readonly account: LocalAccount | undefined };

/** Everything the top-up, staking and withdraw routes need from the chain, built once from config. */
export type ChainServices = {
  readonly context: ChainContext;
  readonly nativeSymbol: string;
  readonly nativeDecimals: number;
  /** nanousd per whole native token (the devnet's fixed price source). */
  readonly nativeUsdPriceNano: bigint;
  /** Stable token addresses; a symbol without an address is not accepted. */
  readonly tokens: Readonly<Partial<Record<StableSymbol, Address>>>;
  readonly confirmations: number;
  /** StakingPool.sol (issue 43) with its slasher key, when configured: where stake is held. */
  readonly stakingPool: StakingPool | undefined;
  readonly stakingVault: Vault | undefined;
  readonly rewardsVault: Vault | undefined;
  /** Pays node owners their earnings; without its key, payouts answer treasury_unavailable. */
  readonly treasury: Vault | undefined;
  readonly tiers: readonly Tier[];
  readonly baseApyBps: bigint;
  readonly unbondingPeriodMs: number;
  readonly withdrawDailyLimitNano: bigint;
};

/**
 * Builds the chain services from configuration, or undefined when no chain RPC is configured
 * (then the chain routes answer chain_unavailable). Throws invalid_config on contradictions.
 * With `db`, every wallet's signer queue also holds that wallet's lease in the database, so
 * replicas sharing it never check-then-send for one wallet at once.
 */
export function createChainServices(
  config: CoordinatorConfig,
  db?: Kysely<Database>,
): ChainServices | undefined {
  const { chain, staking } = config;
  if (!chain.rpcUrl) return undefined;
  const tokens: Partial<Record<StableSymbol, Address>> = {};
  for (const symbol of STABLE_SYMBOLS) {
    const address = chain.tokens[symbol];
    if (address) tokens[symbol] = getAddress(address);
  }
  const context = createChainContext({
    rpcUrl: chain.rpcUrl,
    nativeSymbol: chain.nativeSymbol,
    ...(chain.explorerUrl ? { explorerUrl: chain.explorerUrl } : {}),
    ...(db ? { walletLock: createWalletLock(db) } : {}),
  });
  return {
    context,
    stakingPool: chain.stakingPool
      ? new StakingPool(
          context,
          getAddress(chain.stakingPool),
          chain.slasherKey ? privateKeyToAccount(chain.slasherKey as Hex) : undefined,
        )
      : undefined,
    nativeSymbol: chain.nativeSymbol,
    nativeDecimals: chain.nativeDecimals,
    nativeUsdPriceNano: chain.nativeUsdPriceNano,
    tokens,
    confirmations: chain.confirmations,
    stakingVault: vault('chain.stakingVault', chain.stakingVault, chain.stakingVaultKey),
    rewardsVault: vault('chain.rewardsVault', chain.rewardsVault, chain.rewardsVaultKey),
    treasury: vault('chain.treasury', chain.treasury, chain.treasuryKey),
    tiers: tiersFromConfig(staking.tiers, chain.nativeDecimals),
    baseApyBps: BigInt(staking.baseApyBps),
    unbondingPeriodMs: staking.unbondingPeriodS * 1000,
    withdrawDailyLimitNano: chain.withdrawDailyLimitNano,
  };
}

function vault(name: string, address: string | undefined, key: string | undefined): Vault | undefined {
  const account = key ? privateKeyToAccount(key as Hex) : undefined;
  if (account && address && getAddress(address) !== account.address) {
    throw new ApiError('invalid_config', `configuration ${name}: the address does not match its key`, {
      param: name,
    });
  }
  const resolved = account?.address ?? (address ? getAddress(address) : undefined);
  return resolved ? { address: resolved, account } : undefined;
}
