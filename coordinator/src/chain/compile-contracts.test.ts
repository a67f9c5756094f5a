import { expect, test } from 'vitest';
import { compileContracts } from './compile-contracts.js';
import { stableTokenArtifact } from './stable-token-artifact.js';

test('default: the committed artifact is what solc makes of contracts/StableToken.sol', async () => {
  const { StableToken } = await compileContracts();
  expect(StableToken?.abi).toEqual(stableTokenArtifact.abi);
  expect(StableToken?.bytecode).toBe(stableTokenArtifact.bytecode);
});
