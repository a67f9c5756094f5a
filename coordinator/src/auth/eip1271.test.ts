/**
 * EIP-1271 sign-in against a real chain: a contract wallet (owned by an EOA) signs in when the
 * coordinator has a chain RPC configured, and not when it has none.
 */
import { createRequire } from 'node:module';
import { type Abi, createPublicClient, createWalletClient, type Hex, http } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { defineGpumeshChain } from '../chain/define-chain.js';
import { type Devnet, startDevnet } from '../chain/devnet.js';
import { verifyWalletSignature } from './verify-wallet-signature.js';

const WALLET_SOURCE = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.0;
contract OwnedWallet {
  address public immutable owner;
  constructor(address o) { owner = o; }
  function isValidSignature(bytes32 hash, bytes calldata sig) external view returns (bytes4) {
    if (sig.length != 65) return 0xffffffff;
    bytes32 r; bytes32 s; uint8 v;
    assembly { r := calldataload(sig.offset) s := calldataload(add(sig.offset, 32)) v := byte(0, calldataload(add(sig.offset, 64))) }
    return ecrecover(hash, v, r, s) == owner ? bytes4(0x1626ba7e) : bytes4(0xffffffff);
  }
}`;

function compileWallet(): { abi: Abi; bytecode: Hex } {
  const solc = createRequire(import.meta.url)('solc') as { compile(input: string): string };
  const out = JSON.parse(
    solc.compile(
      JSON.stringify({
        language: 'Solidity',
        sources: { 'W.sol': { content: WALLET_SOURCE } },
        settings: { evmVersion: 'berlin', outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
      }),
    ),
  ) as { contracts: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>> };
  const c = out.contracts['W.sol']!.OwnedWallet!;
  return { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}` };
}

describe('verifyWalletSignature with a contract wallet (EIP-1271)', () => {
  let devnet: Devnet;
  let walletAddress: `0x${string}`;
  const owner = privateKeyToAccount(generatePrivateKey());

  beforeAll(async () => {
    devnet = await startDevnet();
    const chain = defineGpumeshChain({ rpcUrl: devnet.rpcUrl, nativeSymbol: devnet.nativeSymbol });
    const wallet = createWalletClient({
      account: devnet.funder.account,
      chain,
      transport: http(devnet.rpcUrl),
    });
    const client = createPublicClient({ chain, transport: http(devnet.rpcUrl) });
    const { abi, bytecode } = compileWallet();
    const hash = await wallet.deployContract({
      abi,
      bytecode,
      args: [owner.address],
      type: 'legacy',
      gasPrice: 150_000_000_000n,
    });
    const receipt = await client.waitForTransactionReceipt({ hash });
    walletAddress = receipt.contractAddress!;
  }, 60_000);
  afterAll(async () => {
    await devnet?.stop();
  });

  test('default: the owner signs for the contract wallet when a chain is configured', async () => {
    const client = createPublicClient({ transport: http(devnet.rpcUrl) });
    const message = 'Sign this message to authenticate with gpumesh.\n\nNonce: abc';
    const signature = await owner.signMessage({ message });
    expect(await verifyWalletSignature(client, { address: walletAddress, message, signature })).toBe(true);
    // without a chain, a contract wallet cannot be checked: refused
    expect(await verifyWalletSignature(undefined, { address: walletAddress, message, signature })).toBe(
      false,
    );
  });

  test('error: a stranger cannot sign for the contract wallet', async () => {
    const client = createPublicClient({ transport: http(devnet.rpcUrl) });
    const message = 'hello';
    const signature = await privateKeyToAccount(generatePrivateKey()).signMessage({ message });
    expect(await verifyWalletSignature(client, { address: walletAddress, message, signature })).toBe(false);
  });
});
