/**
 * StakingPool.sol on a real anvil: 1,000 random sequences of stake, unbond, withdraw, slash, fund,
 * claim and waits by four owners (fast-check), each from the same fresh deployment (evm_snapshot /
 * evm_revert). After every transaction the chain is compared with an exact model
 * (staking-pool-model.ts): the call succeeded exactly when the model says it may, every position and
 * the pool are the model's to the wei, and the contract's balance = Σ (staked + unbonding) + pool.
 */
import fc from 'fast-check';
import { type Address, type Hex, hexToBigInt, toHex } from 'viem';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type Devnet, startDevnet } from './chain-fixture.js';
import { type ModelCall, PoolModel, type PoolParameters } from './staking-pool-model.js';
import {
  decodeRead,
  deployPool,
  poolCall,
  type Receipt,
  Rpc,
  type RpcRequest,
  readRequest,
} from './staking-pool-rpc.js';

const OWNERS = 4;
const SEQUENCES = Number(process.env.STAKING_PROPERTY_RUNS ?? 1_000);
const TOKEN = 10n ** 18n;
const PARAMETERS: PoolParameters = {
  unbondingPeriodS: 100n,
  slashBps: 1_000n,
  baseApyBps: 5_000n,
  tierMinStake: [0n, TOKEN, 3n * TOKEN],
  tierMultiplierBps: [10_000n, 11_000n, 15_000n],
};

let devnet: Devnet;
let rpc: Rpc;
let pool: Address;
let owners: Address[];
let slasher: Address;
let startS: bigint;
let snapshot: Hex;
let baseModel: PoolModel;

beforeAll(async () => {
  devnet = await startDevnet({ blockTimeS: 0 });
  rpc = new Rpc(devnet.rpcUrl);
  owners = devnet.accounts.slice(0, OWNERS).map((a) => a.address);
  slasher = devnet.accounts[OWNERS]!.address;
  const deployed = await deployPool(rpc, devnet.funder.address, { slasher, ...PARAMETERS });
  pool = deployed.address;
  startS = decodeRead<bigint>('startTime', await rpc.call<Hex>(...readArgs('startTime', [], 'latest')));
  // Every sequence starts from positions of every kind: staked, unbonding, a funded pool.
  const head = await rpc.call<{ timestamp: Hex }>('eth_getBlockByNumber', ['latest', false]);
  baseModel = new PoolModel(PARAMETERS, startS, OWNERS);
  await runOps(baseModel, hexToBigInt(head.timestamp), [
    ...owners.map((_, i) => ({ kind: 'stake' as const, owner: i, value: BigInt(i + 1) * TOKEN })),
    { kind: 'fund', owner: 0, value: TOKEN / 100n },
    { kind: 'unbond', owner: 1, ratioBps: 2_500 },
    { kind: 'unbond', owner: 3, ratioBps: 5_000 },
    { kind: 'wait', seconds: 60 },
    { kind: 'unbond', owner: 3, ratioBps: 1_000 },
  ]);
  snapshot = await rpc.call<Hex>('evm_snapshot');
});
afterAll(async () => devnet?.stop());

function readArgs(functionName: string, args: unknown[], block: Hex | 'latest'): [string, unknown[]] {
  const request = readRequest(pool, functionName, args, block as Hex);
  return [request.method, request.params];
}

type Op =
  | { kind: 'stake' | 'fund'; owner: number; value: bigint }
  | { kind: 'unbond'; owner: number; ratioBps: number }
  | { kind: 'withdraw'; owner: number }
  | { kind: 'slash'; owner: number; bps: number; conviction: number; byOwner: number | null }
  | { kind: 'claim'; owner: number; ratioBps: number; overPool: boolean }
  | { kind: 'wait'; seconds: number };

const owner = fc.integer({ min: 0, max: OWNERS - 1 });
const value = fc.oneof(
  { weight: 1, arbitrary: fc.constant(0n) },
  { weight: 6, arbitrary: fc.bigInt({ min: 1n, max: 3n * TOKEN }) },
);
const opArbitrary: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('stake' as const), owner, value }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('unbond' as const),
      owner,
      ratioBps: fc.integer({ min: 0, max: 11_000 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('withdraw' as const), owner }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('slash' as const),
      owner,
      bps: fc.integer({ min: 0, max: 1_200 }),
      conviction: fc.integer({ min: 0, max: 5 }),
      byOwner: fc.option(owner, { freq: 5 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('fund' as const), owner, value }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('claim' as const),
      owner,
      ratioBps: fc.integer({ min: 0, max: 11_000 }),
      overPool: fc.boolean(),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('wait' as const),
      seconds: fc.constantFrom(1, 20, 60, 150, 100_000),
    }),
  },
);

/** The model's call and the transaction for an op, given the model's state at `nowS`. */
function callFor(op: Exclude<Op, { kind: 'wait' }>, model: PoolModel, nowS: bigint) {
  const from = owners[op.owner]!;
  switch (op.kind) {
    case 'stake':
      return { call: op, tx: { from, value: op.value, data: poolCall('stake') } };
    case 'fund':
      return { call: op, tx: { from, value: op.value, data: poolCall('fundRewards') } };
    case 'unbond': {
      const staked = model.positions[op.owner]!.staked;
      const amount = op.ratioBps > 10_000 ? staked + 1n : (staked * BigInt(op.ratioBps)) / 10_000n;
      return {
        call: { ...op, amount } as ModelCall,
        tx: { from, data: poolCall('requestUnbond', [amount]) },
      };
    }
    case 'withdraw':
      return { call: op, tx: { from, data: poolCall('withdraw') } };
    case 'slash': {
      const args = [
        owners[op.owner],
        BigInt(op.bps),
        toHex(op.conviction, { size: 32 }),
        toHex(9, { size: 32 }),
      ];
      const caller = op.byOwner === null ? slasher : owners[op.byOwner]!;
      return {
        call: { ...op, bps: BigInt(op.bps) } as ModelCall,
        tx: { from: caller, data: poolCall('slash', args) },
      };
    }
    case 'claim': {
      // Claimable only grows with time, so a ratio of the model's claimable a block ago stays valid.
      const claimable = model.claimable(op.owner, nowS);
      const amount = op.overPool
        ? model.pool + 1n
        : op.ratioBps > 10_000
          ? claimable + TOKEN
          : (claimable * BigInt(op.ratioBps)) / 10_000n;
      return { call: { ...op, amount } as ModelCall, tx: { from, data: poolCall('claim', [amount]) } };
    }
  }
}

type Position = readonly [bigint, bigint, bigint, bigint, bigint, bigint];

type Reads = { balance: Hex; rewardsPool: Hex; positions: Hex[] };

/** The pool's balance, its rewards pool and every owner's position at `block`, in one request. */
function readsAt(block: Hex | 'latest'): RpcRequest[] {
  return [
    { method: 'eth_getBalance', params: [pool, block] },
    readRequest(pool, 'rewardsPool', [], block as Hex),
    ...owners.map((o) => readRequest(pool, 'positionOf', [o], block as Hex)),
  ];
}

/**
 * The receipt of `hash`, its block and the reads at the head, in one request (reads at the head are
 * what anvil answers fastest). Automine answers the hash as the block is being inserted, so the batch
 * may come a moment early (no receipt yet, or the head still the block before): it is asked again.
 */
async function readAfter(
  hash: Hex,
): Promise<{ receipt: Receipt; block: { number: Hex; timestamp: Hex } } & Reads> {
  const deadline = Date.now() + 60_000; // a safety net: a loaded machine only makes it ask longer
  for (let attempt = 0; Date.now() < deadline; attempt++) {
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const [receipt, block, balance, rewardsPool, ...positions] = await rpc.batch<
      [Receipt | null, { number: Hex; timestamp: Hex }, Hex, Hex, ...Hex[]]
    >([
      { method: 'eth_getTransactionReceipt', params: [hash] },
      { method: 'eth_getBlockByNumber', params: ['latest', false] },
      ...readsAt('latest'),
    ]);
    if (receipt && receipt.blockNumber === block.number)
      return { receipt, block, balance, rewardsPool, positions };
  }
  throw new Error(`no receipt for ${hash}`);
}

/**
 * The chain against the model: the pool, every position's staked and unbonding amounts, and the
 * invariant balance = Σ (staked + unbonding) + pool. `atS` (the reads' block time) also compares
 * the time-dependent claimable and withdrawable amounts; reads at the head are simulated at a time
 * of anvil's choosing, so those are compared at an explicit block.
 */
function compare(model: PoolModel, reads: Reads, atS: bigint | null): void {
  const chainPool = decodeRead<bigint>('rewardsPool', reads.rewardsPool);
  let held = chainPool;
  reads.positions.forEach((data, i) => {
    const [staked, unbonding, withdrawable, claimable] = decodeRead<Position>('positionOf', data);
    const expected = model.view(i, atS ?? 0n);
    if (atS === null) {
      expect({ staked, unbonding }).toEqual({ staked: expected.staked, unbonding: expected.unbonding });
    } else {
      expect({ staked, unbonding, withdrawable, claimable }).toEqual(expected);
    }
    held += staked + unbonding;
  });
  expect(chainPool).toBe(model.pool);
  expect(hexToBigInt(reads.balance)).toBe(held);
}

let transactions = 0;
let refusals = 0;

async function runSequence(ops: Op[]): Promise<void> {
  const reverted = await rpc.call<boolean>('evm_revert', [snapshot]);
  if (!reverted) throw new Error(`evm_revert ${snapshot} failed`);
  snapshot = await rpc.call<Hex>('evm_snapshot');
  const head = await rpc.call<{ timestamp: Hex }>('eth_getBlockByNumber', ['latest', false]);
  await runOps(baseModel.clone(), hexToBigInt(head.timestamp), ops);
}

/** Runs `ops` from block time `nowS`, comparing the chain with `model` after each transaction. */
async function runOps(model: PoolModel, startedS: bigint, ops: Op[]): Promise<void> {
  let nowS = startedS;
  let lastBlock: Hex | undefined;
  for (const op of ops) {
    if (op.kind === 'wait') {
      await rpc.call('evm_increaseTime', [op.seconds]);
      continue;
    }
    const { call, tx } = callFor(op, model, nowS);
    const hash = await rpc.send({ to: pool, gas: 400_000n, ...tx });
    const { receipt, block, ...reads } = await readAfter(hash);
    nowS = hexToBigInt(block.timestamp);
    lastBlock = block.number;
    const expected = model.apply(call, nowS);
    transactions++;
    if (expected.refused) refusals++;
    expect({ op: call.kind, status: receipt.status }).toEqual({
      op: call.kind,
      status: expected.refused ? '0x0' : '0x1',
    });
    compare(model, reads, null);
  }
  if (lastBlock) {
    const [balance, rewardsPool, ...positions] = await rpc.batch<[Hex, Hex, ...Hex[]]>(readsAt(lastBlock));
    compare(model, { balance, rewardsPool, positions }, nowS);
  }
}

test('default: 1,000 random sequences keep balance = Σ positions + pool, to the wei, as the model says', async () => {
  const started = Date.now();
  await fc.assert(fc.asyncProperty(fc.array(opArbitrary, { minLength: 1, maxLength: 8 }), runSequence), {
    numRuns: SEQUENCES,
    seed: Number(process.env.STAKING_PROPERTY_SEED ?? Date.now() % 2 ** 31),
  });
  console.log(
    `staking pool property: ${SEQUENCES} sequences, ${transactions} transactions (${refusals} refused) in ${Date.now() - started} ms`,
  );
  expect(transactions).toBeGreaterThan(SEQUENCES * 2);
  expect(refusals).toBeGreaterThan(0);
}, 600_000);
