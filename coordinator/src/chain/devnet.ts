import { type ChildProcess, spawn } from 'node:child_process';
import { access, chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type Address, encodeFunctionData, type Hex, type LocalAccount, parseEther, parseUnits } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { DEFAULT_NATIVE_SYMBOL } from '../config-schema.js';
import { anvilCommand } from './anvil-binary.js';
import { type ChainContext, createChainContext } from './chain-context.js';
import {
  CHAIN_ID,
  DEFAULT_BLOCK_TIME_S,
  GAS_PRICE_WEI,
  STABLE_DECIMALS,
  STABLE_SYMBOLS,
  type StableSymbol,
} from './constants.js';
import { DEFAULT_STAKING_POOL_PARAMETERS, type StakingPoolParameters } from './deploy-staking-pool.js';
import { deployDevnetPool, deployTokens } from './devnet-contracts.js';
import { sendTransaction } from './send-transaction.js';
import { stableTokenArtifact } from './stable-token-artifact.js';

/** The public test mnemonic anvil and hardhat use; its keys are well known — devnet only. */
export const DEVNET_MNEMONIC = 'test test test test test test test test test test test junk';

/** Dev accounts the devnet creates (index 0 funds and deploys; the last three: treasury and vaults). */
export const DEFAULT_DEVNET_ACCOUNTS = 10;

/** Native balance anvil gives each dev account, in whole tokens. */
export const DEFAULT_DEVNET_BALANCE_TOKENS = 1_000_000;

/** Stables minted to each dev account, in whole tokens. */
export const DEFAULT_DEVNET_STABLES_PER_ACCOUNT = 1_000_000;

/** How long anvil may take to print its listening address. */
export const DEVNET_START_TIMEOUT_MS = 20_000;

/** How long anvil may take to exit after SIGTERM before it is killed. */
export const DEVNET_STOP_TIMEOUT_MS = 5_000;

/** File in the data directory holding the devnet's addresses. */
export const DEVNET_FILE_NAME = 'devnet.json';

/** File in the data directory holding the persisted chain state (`persist: true`). */
export const DEVNET_STATE_FILE_NAME = 'devnet-state.json';

/** How often anvil saves a persisted chain state, besides on exit. */
export const DEVNET_STATE_INTERVAL_S = 2;

export type DevAccount = { address: Address; privateKey: Hex; account: LocalAccount };

export type StartDevnetParameters = {
  /** TCP port; 0 (default) picks a free one. */
  port?: number;
  host?: string;
  /** When set, the devnet's addresses are written to `<dataDir>/devnet.json` (mode 0600). */
  dataDir?: string;
  nativeSymbol?: string;
  /** Seconds between blocks (default 0.5); 0 mines a block per transaction at once (automine). */
  blockTimeS?: number;
  accounts?: number;
  /** Extra addresses funded with native token and stables after deployment. */
  fund?: readonly Address[];
  /**
   * Keep the chain across restarts (needs dataDir): anvil loads and saves its state in
   * `<dataDir>/devnet-state.json`, and a restart with that state skips deployment and funding.
   */
  persist?: boolean;
  /** StakingPool parameters other than the config's defaults (the slasher is the staking vault). */
  stakingPool?: Partial<Omit<StakingPoolParameters, 'slasher'>>;
  /** Environment for locating anvil (GPUMESH_ANVIL_BIN); the process env is never read here. */
  env?: Readonly<Record<string, string | undefined>>;
};

export type FundParameters = {
  /** Native token, in wei. */
  nativeWei?: bigint;
  /** Stables, in token units (6 decimals). */
  stables?: Partial<Record<StableSymbol, bigint>>;
};

export type Devnet = {
  rpcUrl: string;
  chainId: number;
  nativeSymbol: string;
  context: ChainContext;
  tokens: Readonly<Record<StableSymbol, Address>>;
  /**
   * StakingPool.sol (issue 43), deployed by the funder, its rewards pool funded by the rewards vault
   * (DEVNET_REWARDS_POOL_TOKENS); its slasher is the staking vault's key.
   */
  stakingPool: Address;
  /** Dev accounts (not the funder, not the vaults), prefunded with native token and stables. */
  accounts: readonly DevAccount[];
  /** Account 0: deployed the tokens, may mint them. */
  funder: DevAccount;
  /** EOAs that hold staked native token and pay rewards. */
  vaults: { staking: DevAccount; rewards: DevAccount };
  /** Pays node owners their earnings: funded with native token and stables like a dev account. */
  treasury: DevAccount;
  /** Sends native token and mints stables to `address` (legacy transactions, waits for receipts). */
  fund(address: Address, parameters: FundParameters): Promise<void>;
  /** Stops anvil; resolves when the process has exited. Idempotent. */
  stop(): Promise<void>;
};

/**
 * Starts a real EVM dev node (anvil from npm) with the network's constants — chain id 800000,
 * gas price 150 gwei, berlin (EIP-1559 refused), 0.5 s blocks — deploys USD.s, USDT.s and USDC.s,
 * funds the dev accounts with native token and stables and, if asked, writes the addresses to the
 * data directory.
 */
export async function startDevnet(parameters: StartDevnetParameters = {}): Promise<Devnet> {
  const host = parameters.host ?? '127.0.0.1';
  const nativeSymbol = parameters.nativeSymbol ?? DEFAULT_NATIVE_SYMBOL;
  const accountCount = Math.max(parameters.accounts ?? DEFAULT_DEVNET_ACCOUNTS, 5);
  const { command, prefixArgs } = anvilCommand(parameters.env);
  const args = [
    ...prefixArgs,
    '--chain-id',
    String(CHAIN_ID),
    '--gas-price',
    String(GAS_PRICE_WEI),
    '--hardfork',
    'berlin',
    // 0: no interval, a block per transaction as it arrives (automine).
    ...(parameters.blockTimeS === 0
      ? []
      : ['--block-time', String(parameters.blockTimeS ?? DEFAULT_BLOCK_TIME_S)]),
    '--host',
    host,
    '--port',
    String(parameters.port ?? 0),
    '--accounts',
    String(accountCount),
    '--balance',
    String(DEFAULT_DEVNET_BALANCE_TOKENS),
    '--mnemonic',
    DEVNET_MNEMONIC,
  ];
  const persisted =
    parameters.persist && parameters.dataDir ? await readPersisted(parameters.dataDir) : undefined;
  if (parameters.persist && parameters.dataDir) {
    args.push('--state', join(parameters.dataDir, DEVNET_STATE_FILE_NAME));
    args.push('--state-interval', String(DEVNET_STATE_INTERVAL_S));
  }
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // If our process exits without stop() (a crashed test worker), anvil must not outlive it.
  const killOnExit = (): void => {
    child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return exited;
    stopped = true;
    process.off('exit', killOnExit);
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), DEVNET_STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    }
  };
  try {
    const port = await waitForListening(child);
    const rpcUrl = `http://${host}:${port}`;
    const context = createChainContext({ rpcUrl, nativeSymbol });
    const all: DevAccount[] = Array.from({ length: accountCount }, (_, i) => devAccount(i));
    const funder = all[0]!;
    const vaults = { staking: all[accountCount - 2]!, rewards: all[accountCount - 1]! };
    const treasury = all[accountCount - 3]!;
    const accounts = all.slice(1, accountCount - 3);

    let tokens: Record<StableSymbol, Address>;
    let stakingPool: Address;
    const fund = fundWith(context, funder);
    if (persisted?.stakingPool) {
      // The chain state came back from disk: the contracts and balances are already there.
      tokens = persisted.tokens;
      stakingPool = persisted.stakingPool;
    } else {
      [tokens, stakingPool] = await Promise.all([
        persisted ? persisted.tokens : deployTokens(context, funder.account),
        deployDevnetPool(
          context,
          { deployer: funder.account, funder: vaults.rewards.account },
          {
            slasher: vaults.staking.address,
            // The vault era's stake sits in the staking vault: it may move it in (pool-migration/).
            migrator: vaults.staking.address,
            ...DEFAULT_STAKING_POOL_PARAMETERS,
            ...parameters.stakingPool,
          },
        ),
      ]);
    }
    if (!persisted) {
      const perAccount = parseUnits(String(DEFAULT_DEVNET_STABLES_PER_ACCOUNT), STABLE_DECIMALS);
      const stables = Object.fromEntries(STABLE_SYMBOLS.map((s) => [s, perAccount])) as Record<
        StableSymbol,
        bigint
      >;
      await Promise.all([
        ...[funder, ...accounts, vaults.rewards, treasury].map((a) => fund(tokens, a.address, { stables })),
        ...(parameters.fund ?? []).map((address) =>
          fund(tokens, address, { nativeWei: parseEther(String(DEFAULT_DEVNET_BALANCE_TOKENS)), stables }),
        ),
      ]);
    }

    const devnet: Devnet = {
      rpcUrl,
      chainId: CHAIN_ID,
      nativeSymbol,
      context,
      tokens,
      stakingPool,
      accounts,
      funder,
      vaults,
      treasury,
      fund: (address, amounts) => fund(tokens, address, amounts),
      stop,
    };
    if (parameters.dataDir) await writeDevnetFile(parameters.dataDir, devnet);
    return devnet;
  } catch (error) {
    await stop();
    throw error;
  }
}

function devAccount(addressIndex: number): DevAccount {
  const account = mnemonicToAccount(DEVNET_MNEMONIC, { addressIndex });
  const privateKey = account.getHdKey().privateKey;
  if (!privateKey) throw new Error('dev account without a private key');
  return {
    address: account.address,
    privateKey: `0x${Buffer.from(privateKey).toString('hex')}`,
    account,
  };
}

/** Resolves with the port anvil prints once it listens; rejects if it exits or takes too long. */
function waitForListening(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => finish(new Error('anvil did not start in time')), DEVNET_START_TIMEOUT_MS);
    const onData = (chunk: Buffer): void => {
      output = (output + chunk.toString('utf8')).slice(-4096);
      const match = /Listening on [^\s:]+:(\d+)/.exec(output);
      if (match) finish(undefined, Number(match[1]));
    };
    const onExit = (code: number | null): void =>
      finish(new Error(`anvil exited early (code ${code}): ${output}`));
    const onError = (error: Error): void => finish(error);
    function finish(error?: Error, port?: number): void {
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.off('exit', onExit);
      child.off('error', onError);
      // Keep draining anvil's output so a full pipe never blocks it.
      child.stdout?.resume();
      child.stderr?.resume();
      if (error) reject(error);
      else resolve(port!);
    }
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => {
      output = (output + chunk.toString('utf8')).slice(-4096);
    });
    child.once('exit', onExit);
    child.once('error', onError);
  });
}

/** The devnet file: what a coordinator needs to point at this devnet. Dev keys are public anyway. */
export type DevnetFile = {
  chainId: number;
  rpcUrl: string;
  nativeSymbol: string;
  tokens: Record<StableSymbol, Address>;
  /** Absent in a devnet file written before issue 43 (the pool is then deployed on start). */
  stakingPool?: Address;
  funder: { address: Address; privateKey: Hex };
  accounts: { address: Address; privateKey: Hex }[];
  vaults: { staking: { address: Address; privateKey: Hex }; rewards: { address: Address; privateKey: Hex } };
  treasury: { address: Address; privateKey: Hex };
};

async function writeDevnetFile(dataDir: string, devnet: Devnet): Promise<void> {
  const strip = ({ address, privateKey }: DevAccount) => ({ address, privateKey });
  const file: DevnetFile = {
    chainId: devnet.chainId,
    rpcUrl: devnet.rpcUrl,
    nativeSymbol: devnet.nativeSymbol,
    tokens: { ...devnet.tokens },
    stakingPool: devnet.stakingPool,
    funder: strip(devnet.funder),
    accounts: devnet.accounts.map(strip),
    vaults: { staking: strip(devnet.vaults.staking), rewards: strip(devnet.vaults.rewards) },
    treasury: strip(devnet.treasury),
  };
  await mkdir(dataDir, { recursive: true });
  const path = join(dataDir, DEVNET_FILE_NAME);
  await writeFile(path, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
  await chmod(path, 0o600);
}

/** Sends native token and mints stables from the funder (legacy transactions, waits for receipts). */
function fundWith(context: ChainContext, funder: DevAccount) {
  return async (
    tokens: Readonly<Record<StableSymbol, Address>>,
    address: Address,
    { nativeWei = 0n, stables = {} }: FundParameters,
  ): Promise<void> => {
    const sends: Promise<unknown>[] = [];
    if (nativeWei > 0n)
      sends.push(sendTransaction(context, { account: funder.account, to: address, value: nativeWei }));
    for (const symbol of STABLE_SYMBOLS) {
      const amount = stables[symbol] ?? 0n;
      if (amount <= 0n) continue;
      sends.push(
        sendTransaction(context, {
          account: funder.account,
          to: tokens[symbol],
          data: encodeFunctionData({
            abi: stableTokenArtifact.abi,
            functionName: 'mint',
            args: [address, amount],
          }),
        }),
      );
    }
    await Promise.all(sends);
  };
}

/** The devnet file of an earlier persisted run, when its chain state is also on disk. */
async function readPersisted(dataDir: string): Promise<DevnetFile | undefined> {
  try {
    await access(join(dataDir, DEVNET_STATE_FILE_NAME));
    return JSON.parse(await readFile(join(dataDir, DEVNET_FILE_NAME), 'utf8')) as DevnetFile;
  } catch {
    return undefined;
  }
}

/**
 * The coordinator's chain settings for this devnet: RPC, tokens, the staking pool, the slasher and
 * vault keys (devnet keys are public anyway). Pass as `overrides` to loadConfig / startServer.
 */
export function devnetChainConfig(devnet: Devnet): {
  chain: {
    rpcUrl: string;
    nativeSymbol: string;
    tokens: Record<string, Address>;
    stakingVaultKey: Hex;
    rewardsVaultKey: Hex;
    treasuryKey: Hex;
    stakingPool: Address;
    slasherKey: Hex;
  };
} {
  return {
    chain: {
      rpcUrl: devnet.rpcUrl,
      nativeSymbol: devnet.nativeSymbol,
      tokens: { ...devnet.tokens },
      stakingVaultKey: devnet.vaults.staking.privateKey,
      rewardsVaultKey: devnet.vaults.rewards.privateKey,
      treasuryKey: devnet.treasury.privateKey,
      stakingPool: devnet.stakingPool,
      slasherKey: devnet.vaults.staking.privateKey,
    },
  };
}
