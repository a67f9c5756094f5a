/**
 * StakingPool.sol on a real anvil: every refusal the issue names (a slash by anyone but the slasher,
 * above the cap or twice for one conviction; a withdraw before the unbonding ends; a claim above the
 * pool or the claimable amount; reentrant calls; a stake of 0; an unbond above the position; a bad
 * deployment) answers its own error and changes nothing; the gas of every operation, measured.
 */
import {
  type Abi,
  type Address,
  decodeErrorResult,
  decodeFunctionResult,
  encodeDeployData,
  encodeFunctionData,
  type Hex,
  hexToBigInt,
  toHex,
  zeroAddress,
} from 'viem';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { compileContracts } from '../coordinator/src/chain/compile-contracts.js';
import { stakingPoolArtifact } from '../coordinator/src/chain/staking-pool-artifact.js';
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
const CONVICTION = toHex(1, { size: 32 });
const EVIDENCE = `0x${'ab'.repeat(32)}` as Hex;

let devnet: Devnet;
let rpc: Rpc;
let pool: Address;
let slasher: Address;
let alice: Address;
let bob: Address;
let parameters: DeployParameters;

beforeAll(async () => {
  devnet = await startDevnet({ blockTimeS: 0 });
  rpc = new Rpc(devnet.rpcUrl);
  [alice, bob, slasher] = devnet.accounts.map((a) => a.address) as [Address, Address, Address];
  parameters = {
    slasher,
    unbondingPeriodS: UNBONDING_S,
    slashBps: 1_000n,
    baseApyBps: 500n,
    tierMinStake: [0n, 100n * TOKEN, 1_000n * TOKEN],
    tierMultiplierBps: [10_000n, 10_000n, 11_000n],
  };
  pool = (await deployPool(rpc, devnet.funder.address, parameters)).address;
  stakers.push(alice, bob);
});
afterAll(async () => devnet?.stop());

/** Sends (`to` null: a deployment) and returns the receipt (mined at once: automine). */
async function send(from: Address, data: Hex, value = 0n, to: Address | null = pool): Promise<Receipt> {
  return rpc.receipt(await rpc.send({ from, ...(to ? { to } : {}), data, value, gas: 3_000_000n }));
}

/** The error a call would revert with (simulated), then the transaction itself mined and reverted. */
async function expectRefused(from: Address, data: Hex, errorName: string, value = 0n, to = pool) {
  const before = await state();
  const error = await rpc.call('eth_call', [{ from, to, data, value: toHex(value) }, 'latest']).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(RpcError);
  const decoded = decodeErrorResult({ abi: poolAbi as Abi, data: (error as RpcError).data as Hex });
  expect(decoded.errorName).toBe(errorName);
  expect((await send(from, data, value, to)).status).toBe('0x0');
  expect(await state()).toEqual(before);
  return decoded.args ?? [];
}

type Position = readonly [bigint, bigint, bigint, bigint, bigint, bigint];

async function position(owner: Address): Promise<Position> {
  const { method, params } = readRequest(pool, 'positionOf', [owner], 'latest' as Hex);
  return decodeRead<Position>('positionOf', await rpc.call<Hex>(method, params));
}

/** Every address that has staked here (the reentrant owner contract joins them). */
const stakers: Address[] = [];

/** Balance, pool and every staker's staked and unbonding amounts (not time-dependent). */
async function state() {
  const { method, params } = readRequest(pool, 'rewardsPool', [], 'latest' as Hex);
  const positions = await Promise.all(stakers.map(async (o) => (await position(o)).slice(0, 2)));
  return {
    balance: hexToBigInt(await rpc.call<Hex>('eth_getBalance', [pool, 'latest'])),
    rewardsPool: decodeRead<bigint>('rewardsPool', await rpc.call<Hex>(method, params)),
    positions,
  };
}

/** The invariant: balance = Σ (staked + unbonding) + rewards pool, to the wei. */
async function expectBalanced(): Promise<void> {
  const s = await state();
  expect(s.balance).toBe(s.positions.flat().reduce((sum, v) => sum + v, s.rewardsPool));
}

const gas: Record<string, bigint> = {};

describe('refusals', () => {
  test('default: owners stake, unbond, the pool is funded; a stake of 0 and an unbond above the position are refused', async () => {
    gas['stake (first)'] = hexToBigInt((await send(alice, poolCall('stake'), 1_000n * TOKEN)).gasUsed);
    gas['stake (again)'] = hexToBigInt((await send(alice, poolCall('stake'), 500n * TOKEN)).gasUsed);
    await send(bob, poolCall('stake'), 200n * TOKEN);
    gas.fundRewards = hexToBigInt((await send(bob, poolCall('fundRewards'), 10n ** 15n)).gasUsed);
    gas.requestUnbond = hexToBigInt((await send(alice, poolCall('requestUnbond', [100n * TOKEN]))).gasUsed);
    await expectRefused(alice, poolCall('stake'), 'ZeroAmount');
    await expectRefused(alice, poolCall('fundRewards'), 'ZeroAmount');
    const [staked] = await position(alice);
    expect(await expectRefused(alice, poolCall('requestUnbond', [staked + 1n]), 'ExceedsStake')).toEqual([
      staked,
      staked + 1n,
    ]);
    await expectRefused(alice, poolCall('requestUnbond', [0n]), 'ZeroAmount');
    // A plain transfer is not a stake: the pool has no receive function.
    expect((await send(alice, '0x', 1n)).status).toBe('0x0');
    await expectBalanced();
  });

  test('edge: only the slasher slashes, at most slashBps, once per conviction; staked and unbonding both cut', async () => {
    const slashArgs = (bps: bigint, conviction = CONVICTION) =>
      poolCall('slash', [alice, bps, conviction, EVIDENCE]);
    await expectRefused(alice, slashArgs(100n), 'NotSlasher');
    await expectRefused(devnet.funder.address, slashArgs(100n), 'NotSlasher');
    expect(await expectRefused(slasher, slashArgs(1_001n), 'BpsOutOfRange')).toEqual([1_001n, 1_000n]);
    await expectRefused(slasher, slashArgs(0n), 'BpsOutOfRange');
    const [staked, unbonding] = await position(alice);
    const receipt = await send(slasher, slashArgs(1_000n));
    expect(receipt.status).toBe('0x1');
    gas['slash (1 unbonding)'] = hexToBigInt(receipt.gasUsed);
    const [stakedAfter, unbondingAfter] = await position(alice);
    expect(stakedAfter).toBe(staked - staked / 10n);
    expect(unbondingAfter).toBe(unbonding - unbonding / 10n);
    // The Slashed event names the conviction and the evidence hash.
    const slashed = receipt.logs.find((l) => l.address.toLowerCase() === pool.toLowerCase())!;
    expect(slashed.topics[2]).toBe(CONVICTION);
    expect(slashed.data.includes(EVIDENCE.slice(2))).toBe(true);
    expect(await expectRefused(slasher, slashArgs(10n), 'AlreadySlashed')).toEqual([CONVICTION]);
    expect(await readBool('convictionSlashed', [CONVICTION])).toBe(true);
    await expectBalanced();
  });

  test('edge: a withdraw before the unbonding ends is refused; at its end it pays', async () => {
    const [, unbonding] = await position(alice);
    const [releaseTimes] = await unbondings(alice);
    const [nextReleaseAt] = await expectRefused(alice, poolCall('withdraw'), 'NothingToWithdraw');
    expect(nextReleaseAt).toBe(releaseTimes[0]);
    await expectRefused(bob, poolCall('withdraw'), 'NothingToWithdraw');
    // One second short of the release: still refused.
    await rpc.call('evm_setNextBlockTimestamp', [toHex(releaseTimes[0]! - 1n)]);
    await expectRefused(alice, poolCall('withdraw'), 'NothingToWithdraw');
    await rpc.call('evm_setNextBlockTimestamp', [toHex(releaseTimes[0]!)]);
    const before = hexToBigInt(await rpc.call<Hex>('eth_getBalance', [alice, 'latest']));
    const receipt = await send(alice, poolCall('withdraw'));
    gas['withdraw (1 unbonding)'] = hexToBigInt(receipt.gasUsed);
    const after = hexToBigInt(await rpc.call<Hex>('eth_getBalance', [alice, 'latest']));
    const fee = hexToBigInt(receipt.gasUsed) * 150_000_000_000n;
    expect(after - before + fee).toBe(unbonding);
    await expectBalanced();
  });

  test('edge: a claim above the claimable amount or above the pool is refused; within both it pays', async () => {
    await rpc.call('evm_increaseTime', [3 * 365 * 24 * 3600]);
    await send(bob, poolCall('fundRewards'), 1n); // a block three years later
    const [, , , claimable] = await position(alice);
    const poolNow = (await state()).rewardsPool;
    expect(claimable).toBeGreaterThan(poolNow); // 3 years of 5% × 1.1 on 1,215 TOK; a pool of ~150 TOK
    expect(await expectRefused(alice, poolCall('claim', [poolNow + 1n]), 'InsufficientPool')).toEqual([
      poolNow,
      poolNow + 1n,
    ]);
    await expectRefused(alice, poolCall('claim', [0n]), 'ZeroAmount');
    const [, , , bobClaimable] = await position(bob);
    await expectRefused(bob, poolCall('claim', [bobClaimable + TOKEN]), 'ExceedsClaimable');
    const receipt = await send(alice, poolCall('claim', [poolNow]));
    expect(receipt.status).toBe('0x1');
    gas.claim = hexToBigInt(receipt.gasUsed);
    expect((await state()).rewardsPool).toBe(0n);
    await expectBalanced();
  });

  test('edge: reentrant calls from an owner contract are refused, and it is paid once', async () => {
    const { ReentrantStaker } = await compileContracts({ 'test/ReentrantStaker.sol': 'ReentrantStaker' });
    const attackerAbi = ReentrantStaker!.abi;
    const deploy = encodeDeployData({ abi: attackerAbi, bytecode: ReentrantStaker!.bytecode, args: [pool] });
    const attacker = (await send(alice, deploy, 0n, null)).contractAddress!;
    stakers.push(attacker);
    const call = (functionName: string, args: unknown[] = []) =>
      encodeFunctionData({ abi: attackerAbi, functionName, args });
    await send(alice, call('stake'), 10n * TOKEN, attacker);
    await send(alice, call('requestUnbond', [4n * TOKEN]), 0n, attacker);
    await send(bob, poolCall('fundRewards'), TOKEN);
    await rpc.call('evm_increaseTime', [Number(UNBONDING_S)]);
    expect((await send(alice, call('withdraw', [1]), 0n, attacker)).status).toBe('0x1');
    const read = async (functionName: string) =>
      decodeFunctionResult({
        abi: attackerAbi,
        functionName,
        data: await rpc.call<Hex>('eth_call', [{ to: attacker, data: call(functionName) }, 'latest']),
      });
    expect(await read('reentered')).toBe(false);
    expect(
      decodeErrorResult({ abi: poolAbi as Abi, data: (await read('reentryError')) as Hex }).errorName,
    ).toBe('Reentrant');
    expect(hexToBigInt(await rpc.call<Hex>('eth_getBalance', [attacker, 'latest']))).toBe(4n * TOKEN);
    const [, , , claimable] = await position(attacker);
    expect((await send(alice, call('claim', [claimable, 2]), 0n, attacker)).status).toBe('0x1');
    expect(await read('reentered')).toBe(false);
    expect(hexToBigInt(await rpc.call<Hex>('eth_getBalance', [attacker, 'latest']))).toBe(
      4n * TOKEN + claimable,
    );
    await expectBalanced();
  });

  test('edge: at most 32 unbondings open at once; a slash cuts all of them', async () => {
    for (let i = 0; i < 32; i++) await send(bob, poolCall('requestUnbond', [TOKEN]));
    await expectRefused(bob, poolCall('requestUnbond', [TOKEN]), 'TooManyUnbondings');
    const receipt = await send(slasher, poolCall('slash', [bob, 1_000n, toHex(2, { size: 32 }), EVIDENCE]));
    gas['slash (32 unbondings, the most)'] = hexToBigInt(receipt.gasUsed);
    const [amounts] = await unbondings(bob, 0);
    expect(amounts.every((a) => a === TOKEN - TOKEN / 10n)).toBe(true);
    await rpc.call('evm_increaseTime', [Number(UNBONDING_S)]);
    gas['withdraw (32 unbondings, the most)'] = hexToBigInt((await send(bob, poolCall('withdraw'))).gasUsed);
    await expectBalanced();
  });

  test('edge: a deployment with a bad ladder, cap or slasher is refused', async () => {
    const bad = (p: Partial<DeployParameters>) => {
      const q = { ...parameters, ...p };
      return encodeDeployData({
        abi: poolAbi,
        bytecode: stakingPoolArtifact.bytecode,
        args: [
          q.slasher,
          q.unbondingPeriodS,
          q.slashBps,
          q.baseApyBps,
          [...q.tierMinStake],
          [...q.tierMultiplierBps],
          q.migrator ?? zeroAddress,
        ],
      });
    };
    const cases: Partial<DeployParameters>[] = [
      { slasher: '0x0000000000000000000000000000000000000000' },
      { slashBps: 10_001n },
      { tierMinStake: [1n], tierMultiplierBps: [10_000n] },
      { tierMinStake: [0n, 5n, 5n], tierMultiplierBps: [1n, 2n, 3n] },
      { tierMinStake: [0n, 5n], tierMultiplierBps: [1n] },
    ];
    for (const c of cases) {
      expect((await send(alice, bad(c), 0n, null)).status).toBe('0x0');
    }
  });
});

test('default: gas per operation (legacy transactions, berlin)', () => {
  console.log(
    `StakingPool gas:\n${Object.entries(gas)
      .map(([op, used]) => `  ${op}: ${used}`)
      .join('\n')}`,
  );
  // Ceilings well above the measured figures (README), so a regression that loops or writes much
  // more shows up here.
  expect(gas['stake (first)']).toBeLessThan(150_000n);
  expect(gas.requestUnbond).toBeLessThan(200_000n);
  expect(gas.claim).toBeLessThan(100_000n);
  expect(gas['slash (32 unbondings, the most)']).toBeLessThan(500_000n);
  expect(gas['withdraw (32 unbondings, the most)']).toBeLessThan(500_000n);
});

async function readBool(functionName: string, args: unknown[]): Promise<boolean> {
  const { method, params } = readRequest(pool, functionName, args, 'latest' as Hex);
  return decodeRead<boolean>(functionName, await rpc.call<Hex>(method, params));
}

async function unbondings(owner: Address, which: 0 | 1 = 1): Promise<[bigint[]]> {
  const { method, params } = readRequest(pool, 'unbondingsOf', [owner], 'latest' as Hex);
  const [amounts, releaseTimes] = decodeRead<[bigint[], bigint[]]>(
    'unbondingsOf',
    await rpc.call<Hex>(method, params),
  );
  return [which === 0 ? [...amounts] : [...releaseTimes]];
}
