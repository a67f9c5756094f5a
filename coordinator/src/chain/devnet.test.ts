import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseEther, parseUnits } from 'viem';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CHAIN_ID, GAS_PRICE_WEI, STABLE_SYMBOLS } from './constants.js';
import { DEVNET_FILE_NAME, type Devnet, devnetChainConfig, startDevnet } from './devnet.js';
import { DEVNET_REWARDS_POOL_TOKENS } from './devnet-contracts.js';
import { sendTransaction } from './send-transaction.js';
import { stableTokenArtifact } from './stable-token-artifact.js';
import { stakingPoolArtifact } from './staking-pool-artifact.js';
import { DEFAULT_TIERS } from './tiers.js';

describe('startDevnet', () => {
  let devnet: Devnet;
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'gpumesh-devnet-'));
    devnet = await startDevnet({ dataDir });
  });
  afterAll(async () => {
    await devnet?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  test('default: chain 800000, gas price 150 gwei, three 6-decimal stables funded', async () => {
    const { client } = devnet.context;
    expect(await client.getChainId()).toBe(CHAIN_ID);
    expect(await client.getGasPrice()).toBe(GAS_PRICE_WEI);
    for (const symbol of STABLE_SYMBOLS) {
      const read = { address: devnet.tokens[symbol], abi: stableTokenArtifact.abi } as const;
      expect(await client.readContract({ ...read, functionName: 'symbol' })).toBe(symbol);
      expect(await client.readContract({ ...read, functionName: 'decimals' })).toBe(6);
      expect(
        await client.readContract({
          ...read,
          functionName: 'balanceOf',
          args: [devnet.accounts[0]!.address],
        }),
      ).toBe(parseUnits('1000000', 6));
    }
    expect(await client.getBalance({ address: devnet.accounts[0]!.address })).toBe(parseEther('1000000'));
  });

  test('behavior: writes the addresses to the data directory (0600)', () => {
    const path = join(dataDir, DEVNET_FILE_NAME);
    expect(existsSync(path)).toBe(true);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const file = JSON.parse(readFileSync(path, 'utf8'));
    expect(file).toMatchObject({ chainId: CHAIN_ID, rpcUrl: devnet.rpcUrl, tokens: devnet.tokens });
    expect(file.vaults.staking.address).toBe(devnet.vaults.staking.address);
    expect(file.stakingPool).toBe(devnet.stakingPool);
  });

  test('behavior: deploys the staking pool, its slasher the staking vault, the default ladder', async () => {
    const read = { address: devnet.stakingPool, abi: stakingPoolArtifact.abi } as const;
    const { client } = devnet.context;
    expect(await client.readContract({ ...read, functionName: 'slasher' })).toBe(
      devnet.vaults.staking.address,
    );
    expect(await client.readContract({ ...read, functionName: 'slashBps' })).toBe(1_000n);
    expect(await client.readContract({ ...read, functionName: 'unbondingPeriod' })).toBe(604_800n);
    expect(await client.readContract({ ...read, functionName: 'tiers' })).toEqual([
      DEFAULT_TIERS.map((t) => t.minStakeWei),
      DEFAULT_TIERS.map((t) => BigInt(t.multiplierBps)),
    ]);
    // Its rewards pool funded by the rewards vault, so claims pay from the start.
    expect(await client.readContract({ ...read, functionName: 'rewardsPool' })).toBe(
      parseEther(String(DEVNET_REWARDS_POOL_TOKENS)),
    );
    // The coordinator's settings name the pool and its slasher's key.
    expect(devnetChainConfig(devnet).chain).toMatchObject({
      stakingPool: devnet.stakingPool,
      slasherKey: devnet.vaults.staking.privateKey,
    });
  });

  test('behavior: refuses EIP-1559 transactions (berlin)', async () => {
    const account = devnet.accounts[1]!.account;
    const { client } = devnet.context;
    const nonce = await client.getTransactionCount({ address: account.address, blockTag: 'pending' });
    const serializedTransaction = await account.signTransaction({
      type: 'eip1559',
      chainId: CHAIN_ID,
      nonce,
      gas: 21_000n,
      maxFeePerGas: GAS_PRICE_WEI,
      maxPriorityFeePerGas: 1n,
      to: devnet.accounts[2]!.address,
      value: 1n,
    });
    await expect(client.sendRawTransaction({ serializedTransaction })).rejects.toThrow();
  });

  test('behavior: concurrent sends of one wallet get distinct nonces, all type 0 at 150 gwei', async () => {
    const account = devnet.accounts[3]!.account;
    const sent = await Promise.all(
      Array.from({ length: 8 }, () =>
        sendTransaction(devnet.context, { account, to: devnet.accounts[4]!.address, value: 1n }),
      ),
    );
    const txs = await Promise.all(sent.map(({ hash }) => devnet.context.client.getTransaction({ hash })));
    expect(new Set(txs.map((tx) => tx.nonce)).size).toBe(8);
    for (const tx of txs) {
      expect(tx.type).toBe('legacy');
      expect(tx.gasPrice).toBe(GAS_PRICE_WEI);
      expect(tx.chainId).toBe(CHAIN_ID);
    }
  });

  test('behavior: stop ends anvil', async () => {
    const other = await startDevnet({ accounts: 4 });
    await other.stop();
    await expect(other.context.client.getChainId()).rejects.toThrow();
    await other.stop();
  });
});
