import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { Abi, Hex } from 'viem';

/** The folder holding the Solidity sources (coordinator/contracts). */
export const CONTRACTS_DIR = fileURLToPath(new URL('../../contracts/', import.meta.url));

/**
 * The EVM the contracts are compiled for. The chain runs a pre-London hardfork (berlin) so that
 * EIP-1559 is refused; solc's default (cancun) would emit PUSH0 and friends, which berlin rejects.
 */
export const EVM_VERSION = 'berlin';

/** Contracts compiled from coordinator/contracts: file name → contract name. */
export const CONTRACT_SOURCES: Readonly<Record<string, string>> = {
  'StableToken.sol': 'StableToken',
  'StakingPool.sol': 'StakingPool',
};

export type CompiledContract = { abi: Abi; bytecode: Hex };

type SolcOutput = {
  errors?: { severity: 'error' | 'warning' | 'info'; formattedMessage: string }[];
  contracts?: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>;
};

/**
 * Compiles the Solidity sources (file under coordinator/contracts → contract name; by default the
 * ones deployed, CONTRACT_SOURCES) with solc from npm (deterministic: fixed compiler, optimizer and
 * EVM version, no metadata hash so the bytecode depends only on the source text).
 */
export async function compileContracts(
  contracts: Readonly<Record<string, string>> = CONTRACT_SOURCES,
): Promise<Record<string, CompiledContract>> {
  const sources: Record<string, { content: string }> = {};
  for (const file of Object.keys(contracts)) {
    sources[file] = { content: await readFile(new URL(file, `file://${CONTRACTS_DIR}`), 'utf8') };
  }
  const input = {
    language: 'Solidity',
    sources,
    settings: {
      evmVersion: EVM_VERSION,
      optimizer: { enabled: true, runs: 200 },
      metadata: { bytecodeHash: 'none', appendCBOR: false },
      outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
    },
  };
  // solc is CommonJS and heavy (a wasm build of the compiler): load it only when compiling.
  const solc = createRequire(import.meta.url)('solc') as { compile(input: string): string };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as SolcOutput;
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) {
    throw new Error(`solc failed:\n${errors.map((e) => e.formattedMessage).join('\n')}`);
  }
  const result: Record<string, CompiledContract> = {};
  for (const [file, name] of Object.entries(contracts)) {
    const contract = output.contracts?.[file]?.[name];
    if (!contract) throw new Error(`solc produced no output for ${file}:${name}`);
    result[name] = { abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` };
  }
  return result;
}
