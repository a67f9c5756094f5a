import { type Address, type Hex, type PublicClient, verifyMessage } from 'viem';

/**
 * True when `signature` over `message` is valid for `address`. EOAs by EIP-191 recovery, locally;
 * when that fails and a chain client is configured, contract wallets by EIP-1271 (and ERC-6492),
 * which viem's public-client verifyMessage checks on chain. Never throws: malformed input, or a
 * chain that cannot be reached, is simply not a valid signature.
 */
export async function verifyWalletSignature(
  client: PublicClient | undefined,
  args: { address: Address; message: string; signature: Hex },
): Promise<boolean> {
  try {
    if (await verifyMessage(args)) return true;
  } catch {
    // not a recoverable EOA signature; a contract wallet may still accept it
  }
  if (!client) return false;
  try {
    return await client.verifyMessage(args);
  } catch {
    return false;
  }
}
