import { type Hex, recoverMessageAddress } from 'viem';

/** The lower-case address that signed `message` (EIP-191), or undefined for any bad signature. */
export async function recoverSigner(message: string, signature: string): Promise<string | undefined> {
  try {
    const address = await recoverMessageAddress({ message, signature: signature as Hex });
    return address.toLowerCase();
  } catch {
    // viem throws on malformed signatures and invalid curve points; to us they are all "not signed".
    return undefined;
  }
}
