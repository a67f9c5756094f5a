/**
 * StakingPool.sol as the service sees it: its calldata, fixed gas limits, its views and its events.
 * Reads only; the calls are sent through the transfer outbox (staking/pool-transfers.ts).
 */
import {
  type Address,
  BaseError,
  ContractFunctionRevertedError,
  decodeErrorResult,
  ExecutionRevertedError,
  encodeFunctionData,
  getAddress,
  type Hex,
  type LocalAccount,
  type Log,
  parseEventLogs,
  RawContractError,
} from 'viem';
import { ApiError } from '../errors.js';
import type { ChainContext } from './chain-context.js';
import { GAS_PRICE_WEI } from './constants.js';
import { stakingPoolArtifact } from './staking-pool-artifact.js';
import { wrapChainError } from './wrap-chain-error.js';

const abi = stakingPoolArtifact.abi;

/**
 * Gas limits of the pool calls: above the measured worst case of each (coordinator/README.md,
 * "Staking contract": a first stake 108k, an unbond 146k, a withdraw of 32 unbondings 131k, a
 * claim 84k, a slash over 32 unbondings 298k), fixed so a balance check runs before anything is
 * signed. Only the gas used is paid.
 */
export const POOL_GAS = {
  stake: 150_000n,
  requestUnbond: 200_000n,
  withdraw: 200_000n,
  claim: 120_000n,
  slash: 400_000n,
  fundRewards: 80_000n,
  /** The migration calls (pool-migration): a first stake's cost, an unbond's, a flag. */
  migrateStake: 200_000n,
  migrateUnbonding: 200_000n,
  endMigration: 60_000n,
} as const;
export type PoolFunction = keyof typeof POOL_GAS;

/** The most a pool call can cost in gas (its limit × 150 gwei). */
export function poolFeeWei(fn: PoolFunction): bigint {
  return POOL_GAS[fn] * GAS_PRICE_WEI;
}

/** What the constructor fixed: nothing changes after deployment. */
export type PoolParameters = {
  readonly slasher: Address;
  readonly unbondingPeriodS: bigint;
  readonly slashBps: bigint;
  readonly baseApyBps: bigint;
  /** The ladder, lowest first: threshold (wei) and multiplier (bps). */
  readonly tiers: readonly { readonly minStakeWei: bigint; readonly multiplierBps: bigint }[];
};

/** One owner's position now (`positionOf`). */
export type PoolPosition = {
  staked: bigint;
  unbonding: bigint;
  withdrawable: bigint;
  claimable: bigint;
  multiplierBps: bigint;
  /** Index of its tier in the ladder. */
  tier: number;
};

/** The pool's totals and its native balance (= staked + unbonding + rewards pool). */
export type PoolTotals = { staked: bigint; unbonding: bigint; rewardsPool: bigint; balance: bigint };

/** A decoded pool event, with where it sits on the chain. */
export type PoolEvent = ReturnType<typeof parseEventLogs<typeof abi>>[number];

/** The pool the service stakes in, and the key that may slash there (when configured). */
export class StakingPool {
  readonly address: Address;
  readonly slasher: LocalAccount | undefined;
  readonly #context: ChainContext;
  #parameters: Promise<PoolParameters> | undefined;

  constructor(context: ChainContext, address: Address, slasher: LocalAccount | undefined) {
    this.#context = context;
    this.address = getAddress(address);
    this.slasher = slasher;
  }

  /** Calldata of a pool call. */
  static encode(call: PoolCall): Hex {
    switch (call.fn) {
      case 'stake':
      case 'withdraw':
        return encodeFunctionData({ abi, functionName: call.fn });
      case 'requestUnbond':
      case 'claim':
        return encodeFunctionData({ abi, functionName: call.fn, args: [call.amount] });
      case 'migrateStake':
        return encodeFunctionData({ abi, functionName: call.fn, args: [call.owner, call.migrationId] });
      case 'migrateUnbonding':
        return encodeFunctionData({
          abi,
          functionName: call.fn,
          args: [call.owner, call.migrationId, call.releaseAtS],
        });
      case 'endMigration':
      case 'fundRewards':
        return encodeFunctionData({ abi, functionName: call.fn });
      case 'slash':
        return encodeFunctionData({
          abi,
          functionName: 'slash',
          args: [call.owner, call.bps, call.convictionId, call.evidenceHash],
        });
    }
  }

  /** The constructor's parameters, read once (they cannot change). */
  parameters(): Promise<PoolParameters> {
    this.#parameters ??= this.#readParameters().catch((error: unknown) => {
      this.#parameters = undefined;
      throw wrapChainError(error);
    });
    return this.#parameters;
  }

  /** An owner's position at the latest block (or at `blockNumber`). */
  async position(owner: Address, blockNumber?: bigint): Promise<PoolPosition> {
    const read = await this.#read(() =>
      this.#context.client.readContract({
        address: this.address,
        abi,
        functionName: 'positionOf',
        args: [owner],
        ...(blockNumber === undefined ? {} : { blockNumber }),
      }),
    );
    const [staked, unbonding, withdrawable, claimable, multiplierBps, tier] = read;
    return { staked, unbonding, withdrawable, claimable, multiplierBps, tier: Number(tier) };
  }

  /** An owner's open unbondings, oldest first: amount (wei) and release time (unix seconds). */
  async unbondings(owner: Address, blockNumber?: bigint): Promise<{ amount: bigint; releaseAtS: bigint }[]> {
    const [amounts, times] = await this.#read(() =>
      this.#context.client.readContract({
        address: this.address,
        abi,
        functionName: 'unbondingsOf',
        args: [owner],
        ...(blockNumber === undefined ? {} : { blockNumber }),
      }),
    );
    return amounts.map((amount, i) => ({ amount, releaseAtS: times[i]! }));
  }

  /** Totals and balance, all read at one block. */
  async totals(): Promise<PoolTotals & { blockNumber: bigint }> {
    const { client } = this.#context;
    return this.#read(async () => {
      const blockNumber = await client.getBlockNumber({ cacheTime: 0 });
      const at = { address: this.address, abi, blockNumber } as const;
      const [staked, unbonding, rewardsPool, balance] = await Promise.all([
        client.readContract({ ...at, functionName: 'totalStaked' }),
        client.readContract({ ...at, functionName: 'totalUnbonding' }),
        client.readContract({ ...at, functionName: 'rewardsPool' }),
        client.getBalance({ address: this.address, blockNumber }),
      ]);
      return { staked, unbonding, rewardsPool, balance, blockNumber };
    });
  }

  /** Whether a conviction id was slashed already (one slash per conviction). */
  convictionSlashed(convictionId: Hex): Promise<boolean> {
    return this.#read(() =>
      this.#context.client.readContract({
        address: this.address,
        abi,
        functionName: 'convictionSlashed',
        args: [convictionId],
      }),
    );
  }

  /** Who may credit vault-era positions (the zero address: nobody), whether it ended, and whether `migrationId` was credited. */
  async migration(migrationId?: Hex): Promise<{ migrator: Address; ended: boolean; migrated: boolean }> {
    const at = { address: this.address, abi } as const;
    const { client } = this.#context;
    return this.#read(async () => {
      const [migrator, ended, migrated] = await Promise.all([
        client.readContract({ ...at, functionName: 'migrator' }),
        client.readContract({ ...at, functionName: 'migrationEnded' }),
        migrationId
          ? client.readContract({ ...at, functionName: 'migrated', args: [migrationId] })
          : Promise.resolve(false),
      ]);
      return { migrator: getAddress(migrator), ended, migrated };
    });
  }

  /** The Slashed event of a conviction id, if it was slashed (with its transaction). */
  async slashedEvent(convictionId: Hex): Promise<PoolEvent | undefined> {
    const logs = await this.#read(() =>
      this.#context.client.getContractEvents({
        address: this.address,
        abi,
        eventName: 'Slashed',
        args: { convictionId },
        fromBlock: 0n,
      }),
    );
    return this.events(logs)[0];
  }

  /** The pool's events among `logs` (a receipt's, say); other contracts' logs are left out. */
  events(logs: readonly Log[]): PoolEvent[] {
    const mine = logs.filter((l) => getAddress(l.address) === this.address);
    return parseEventLogs({ abi, logs: mine as Log[] });
  }

  /** The latest block's timestamp (unix seconds): the pool's clock. */
  now(): Promise<bigint> {
    return this.#read(async () => (await this.#context.client.getBlock({ blockTag: 'latest' })).timestamp);
  }

  /**
   * Runs a call against the pending state without sending it; a refusal of the pool becomes our
   * typed error (pool-refusal codes), so a call that would revert is never signed.
   */
  async simulate({
    from,
    data,
    value,
    gas,
  }: {
    from: Address;
    data: Hex;
    value: bigint;
    gas: bigint;
  }): Promise<void> {
    try {
      await this.#context.client.call({
        account: from,
        to: this.address,
        data,
        value,
        gas,
        blockTag: 'pending',
        gasPrice: GAS_PRICE_WEI,
      });
    } catch (error) {
      throw poolError(error);
    }
  }

  async #readParameters(): Promise<PoolParameters> {
    const { client } = this.#context;
    const at = { address: this.address, abi } as const;
    const [slasher, unbondingPeriodS, slashBps, baseApyBps, [minStake, multipliers]] = await Promise.all([
      client.readContract({ ...at, functionName: 'slasher' }),
      client.readContract({ ...at, functionName: 'unbondingPeriod' }),
      client.readContract({ ...at, functionName: 'slashBps' }),
      client.readContract({ ...at, functionName: 'baseApyBps' }),
      client.readContract({ ...at, functionName: 'tiers' }),
    ]);
    return {
      slasher,
      unbondingPeriodS,
      slashBps,
      baseApyBps,
      tiers: minStake.map((minStakeWei, i) => ({ minStakeWei, multiplierBps: multipliers[i]! })),
    };
  }

  async #read<T>(read: () => Promise<T>): Promise<T> {
    try {
      return await read();
    } catch (error) {
      throw wrapChainError(error);
    }
  }
}

/** A call the service makes on the pool. */
export type PoolCall =
  | { fn: 'stake' }
  | { fn: 'withdraw' }
  | { fn: 'requestUnbond'; amount: bigint }
  | { fn: 'claim'; amount: bigint }
  | { fn: 'slash'; owner: Address; bps: bigint; convictionId: Hex; evidenceHash: Hex }
  | { fn: 'fundRewards' }
  | { fn: 'migrateStake'; owner: Address; migrationId: Hex }
  | { fn: 'migrateUnbonding'; owner: Address; migrationId: Hex; releaseAtS: bigint }
  | { fn: 'endMigration' };

/** The name of the pool's custom error a call reverted with, if it did. */
export function revertName(error: unknown): string | undefined {
  if (!(error instanceof BaseError)) return undefined;
  const decoded = error.walk(
    (e) => e instanceof ContractFunctionRevertedError,
  ) as ContractFunctionRevertedError | null;
  if (decoded?.data?.errorName) return decoded.data.errorName;
  const raw = error.walk((e) => e instanceof RawContractError) as RawContractError | null;
  let data = typeof raw?.data === 'string' ? raw.data : raw?.data?.data;
  if (!raw) {
    // An error without arguments comes back from anvil as its selector in the message alone.
    const reverted = error.walk((e) => e instanceof ExecutionRevertedError) as ExecutionRevertedError | null;
    data = reverted?.details?.match(/custom error (0x[0-9a-fA-F]{8})\b/)?.[1] as Hex | undefined;
    if (!reverted) return undefined;
  }
  if (!data || data === '0x') return 'reverted';
  try {
    return decodeErrorResult({ abi, data }).errorName;
  } catch {
    return 'reverted';
  }
}

/** What a refusal of the pool means to a client; other errors are the chain's (wrapChainError). */
export function poolError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  const name = revertName(error);
  if (!name) return wrapChainError(error, 'params.1');
  switch (name) {
    case 'ZeroAmount':
      return new ApiError('invalid_request', 'The amount must be positive.', { param: 'params.1' });
    case 'ExceedsStake':
      return new ApiError('exceeds_stake', undefined, { param: 'params.1' });
    case 'TooManyUnbondings':
      return new ApiError('too_many_unbondings');
    case 'NothingToWithdraw':
      return new ApiError('nothing_to_withdraw');
    case 'ExceedsClaimable':
      return new ApiError('nothing_to_claim');
    case 'InsufficientPool':
      return new ApiError('rewards_pool_empty');
    default:
      // NotSlasher, BpsOutOfRange, AlreadySlashed, TransferFailed, …: the service's own mistake.
      return new ApiError('chain_tx_failed', `The staking pool refused the call (${name}).`);
  }
}
