import { expect, test } from 'vitest';
import { compileContracts } from './compile-contracts.js';
import { stableTokenArtifact } from './stable-token-artifact.js';
import { stakingPoolArtifact } from './staking-pool-artifact.js';

test('default: the committed artifacts are what solc makes of contracts/*.sol', async () => {
  const { StableToken, StakingPool } = await compileContracts();
  expect(StableToken?.abi).toEqual(stableTokenArtifact.abi);
  expect(StableToken?.bytecode).toBe(stableTokenArtifact.bytecode);
  expect(StakingPool?.abi).toEqual(stakingPoolArtifact.abi);
  expect(StakingPool?.bytecode).toBe(stakingPoolArtifact.bytecode);
});

test('default: no opcode newer than berlin (no PUSH0) in the staking pool', () => {
  // Walk the bytecode skipping PUSH data; 0x5f (PUSH0, shanghai) must never be an opcode.
  const code = Buffer.from(stakingPoolArtifact.bytecode.slice(2), 'hex');
  for (let i = 0; i < code.length; i++) {
    const op = code[i]!;
    expect(op).not.toBe(0x5f);
    if (op >= 0x60 && op <= 0x7f) i += op - 0x5f;
  }
});
