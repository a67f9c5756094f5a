/**
 * StakingPool.sol's migration calls on anvil (issue 43, part 4): the migrator fixed at deployment
 * credits vault-era positions it pays for — a stake, an unbonding with its own release time — each
 * migration id once; nobody else may, an unbonding longer than the pool's own is refused, nothing
 * after `endMigration`, and a pool deployed without a migrator takes none. The balance stays
 * Σ positions + rewards pool to the wei throughout, and a migrated position is an ordinary one
 * (unbonded, withdrawn, slashed like any).
 */
import { type Abi, type Address, decodeErrorResult, type Hex, hexToBigInt, toHex, zeroAddress } from 'viem';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Devnet, startDevnet } from './chain-fixture.js';
import {
  type DeployParameters,
  decodeRead,
  deployPool,
  poolAbi,
  poolCall,
  type Receipt,
  Rpc,
  RpcError,
  readRequest,
} from './staking-pool-rpc.js';

const TOKEN = 10n ** 18n;
const UNBONDING_S = 1_000n;
const id = (n: number) => toHex(n, { size: 32 });

let devnet: Devnet;
let rpc: Rpc;
let pool: Address;
let migrator: Address;
let slasher: Address;
let alice: Address;
let bob: Address;
let parameters: DeployParameters;

beforeAll(async () => {
  devnet = await startDevnet({ blockTimeS: 0 });
  rpc = new Rpc(devnet.rpcUrl);
  [alice, bob, slasher, migrator] = devnet.accounts.map((a) => a.address) as [
    Address,
    Address,
    Address,
    Address,
  ];
  parameters = {
    slasher,
    migrator,
    unbondingPeriodS: UNBONDING_S,
    slashBps: 1_000n,
    baseApyBps: 500n,
    tierMinStake: [0n, 100n * TOKEN],
    tierMultiplierBps: [10_000n, 11_000n],
  };
  pool = (await deployPool(rpc, devnet.funder.address, parameters)).address;
});
afterAll(async () => devnet?.stop());

async function send(from: Address, data: Hex, value = 0n, to: Address = pool): Promise<Receipt> {
  return rpc.receipt(await rpc.send({ from, to, data, value, gas: 3_000_000n }));
}

async function read<T>(functionName: string, args: unknown[] = [], at: Address = pool): Promise<T> {
  const { method, params } = readRequest(at, functionName, args, 'latest' as Hex);
  return decodeRead<T>(functionName, await rpc.call<Hex>(method, params));
}

const position = (owner: Address) =>
  read<readonly [bigint, bigint, bigint, bigint, bigint, bigint]>('positionOf', [owner]);
const now = async () =>
  hexToBigInt((await rpc.call<{ timestamp: Hex }>('eth_getBlockByNumber', ['latest', false])).timestamp);

/** Refused in simulation with `errorName`, then mined and reverted, nothing changed. */
async function expectRefused(from: Address, data: Hex, errorName: string, value = 0n, to = pool) {
  const before = await balanced();
  const error = await rpc.call('eth_call', [{ from, to, data, value: toHex(value) }, 'latest']).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(RpcError);
  expect(decodeErrorResult({ abi: poolAbi as Abi, data: (error as RpcError).data as Hex }).errorName).toBe(
    errorName,
  );
  expect((await send(from, data, value, to)).status).toBe('0x0');
  expect(await balanced()).toBe(before);
}

/** The invariant (balance = Σ staked + unbonding + rewards pool); returns the balance. */
async function balanced(at: Address = pool): Promise<bigint> {
  const balance = hexToBigInt(await rpc.call<Hex>('eth_getBalance', [at, 'latest']));
  const [staked, unbonding, rewards] = await Promise.all([
    read<bigint>('totalStaked', [], at),
    read<bigint>('totalUnbonding', [], at),
    read<bigint>('rewardsPool', [], at),
  ]);
  let owed = rewards;
  for (const owner of [alice, bob]) {
    const [s, u] = await read<readonly [bigint, bigint]>('positionOf', [owner], at);
    owed += s + u;
  }
  expect(staked + unbonding + rewards).toBe(owed);
  expect(balance).toBe(owed);
  return balance;
}

describe('migration calls', () => {
  test('default: the migrator credits a stake and an unbonding it pays for, each id once', async () => {
    const gas: Record<string, bigint> = {};
    const credited = await send(migrator, poolCall('migrateStake', [alice, id(1)]), 150n * TOKEN);
    gas['migrateStake (a new owner)'] = hexToBigInt(credited.gasUsed);
    const releaseAt = (await now()) + 100n; // the vault era's release time, sooner than the pool's
    const receipt = await send(migrator, poolCall('migrateUnbonding', [bob, id(2), releaseAt]), 7n * TOKEN);
    expect(receipt.status).toBe('0x1');
    expect(receipt.logs).toHaveLength(1);
    gas['migrateUnbonding (a new owner)'] = hexToBigInt(receipt.gasUsed);
    console.log(
      `StakingPool migration gas:\n${Object.entries(gas)
        .map(([k, v]) => `  ${k}: ${v}`)
        .join('\n')}`,
    );
    const [staked, unbonding, , , multiplierBps, tier] = await position(alice);
    expect([staked, unbonding, multiplierBps, tier]).toEqual([150n * TOKEN, 0n, 11_000n, 1n]);
    expect((await position(bob)).slice(0, 2)).toEqual([0n, 7n * TOKEN]);
    const [amounts, times] = await read<readonly [bigint[], bigint[]]>('unbondingsOf', [bob]);
    expect(amounts).toEqual([7n * TOKEN]);
    expect(times).toEqual([releaseAt]);
    expect(await read<boolean>('migrated', [id(1)])).toBe(true);
    expect(await balanced()).toBe(157n * TOKEN);

    // Each migration id once, whatever it would credit.
    await expectRefused(migrator, poolCall('migrateStake', [alice, id(1)]), 'AlreadyMigrated', TOKEN);
    await expectRefused(migrator, poolCall('migrateStake', [bob, id(2)]), 'AlreadyMigrated', TOKEN);
    await expectRefused(
      migrator,
      poolCall('migrateUnbonding', [bob, id(1), releaseAt]),
      'AlreadyMigrated',
      TOKEN,
    );
  });

  test('behavior: a migrated position is an ordinary one — withdrawn at its release time, unbonded, slashed', async () => {
    await rpc.call('evm_increaseTime', [100]);
    await rpc.call('evm_mine', []);
    const before = hexToBigInt(await rpc.call<Hex>('eth_getBalance', [bob, 'latest']));
    const withdrawn = await send(bob, poolCall('withdraw'));
    const fee = hexToBigInt(withdrawn.gasUsed) * 150n * 10n ** 9n;
    expect(hexToBigInt(await rpc.call<Hex>('eth_getBalance', [bob, 'latest']))).toBe(
      before + 7n * TOKEN - fee,
    );
    expect((await send(alice, poolCall('requestUnbond', [50n * TOKEN]))).status).toBe('0x1');
    expect(
      (await send(slasher, poolCall('slash', [alice, 1_000n, id(9), `0x${'ab'.repeat(32)}`]))).status,
    ).toBe('0x1');
    expect((await position(alice)).slice(0, 2)).toEqual([90n * TOKEN, 45n * TOKEN]);
    await balanced();
  });

  test('error: nobody but the migrator, nothing of 0, no unbonding longer than the pool’s, none after endMigration', async () => {
    await expectRefused(alice, poolCall('migrateStake', [alice, id(3)]), 'NotMigrator', TOKEN);
    await expectRefused(slasher, poolCall('migrateUnbonding', [bob, id(3), 1n]), 'NotMigrator', TOKEN);
    await expectRefused(alice, poolCall('endMigration'), 'NotMigrator');
    await expectRefused(migrator, poolCall('migrateStake', [alice, id(3)]), 'ZeroAmount');
    const latest = (await now()) + UNBONDING_S;
    await expectRefused(
      migrator,
      poolCall('migrateUnbonding', [bob, id(3), latest + UNBONDING_S]),
      'ReleaseTooLate',
      TOKEN,
    );
    expect(await read<boolean>('migrated', [id(3)])).toBe(false);

    const ended = await send(migrator, poolCall('endMigration'));
    expect(ended.status).toBe('0x1');
    console.log(`StakingPool migration gas:\n  endMigration: ${hexToBigInt(ended.gasUsed)}`);
    expect(await read<boolean>('migrationEnded')).toBe(true);
    await expectRefused(migrator, poolCall('migrateStake', [alice, id(3)]), 'MigrationClosed', TOKEN);
    await expectRefused(migrator, poolCall('migrateUnbonding', [bob, id(3), 1n]), 'MigrationClosed', TOKEN);
    await expectRefused(migrator, poolCall('endMigration'), 'MigrationClosed');
  });

  test('error: a pool deployed without a migrator takes no migration from anyone', async () => {
    const closed = (await deployPool(rpc, devnet.funder.address, { ...parameters, migrator: zeroAddress }))
      .address;
    expect(await read<Address>('migrator', [], closed)).toBe(zeroAddress);
    for (const from of [migrator, alice]) {
      await expectRefused(from, poolCall('migrateStake', [alice, id(4)]), 'NotMigrator', TOKEN, closed);
    }
  });
});
