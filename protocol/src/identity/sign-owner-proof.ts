import { ownerProofText } from './owner-proof-text.js';
import type { Hex, MessageSigner } from './signer.js';

/** The `auth.owner` object: the owner wallet's address and its signature of `ownerProofText(nodeId)`. */
export async function signOwnerProof(
  nodeId: string,
  owner: MessageSigner,
): Promise<{ address: Hex; signature: Hex }> {
  return { address: owner.address, signature: await owner.signMessage({ message: ownerProofText(nodeId) }) };
}
