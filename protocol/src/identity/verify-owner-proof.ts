import { ownerProofText } from './owner-proof-text.js';
import { recoverSigner } from './recover-signer.js';

/** True when `owner.signature` is `owner.address`'s signature of `ownerProofText(nodeId)`. */
export async function verifyOwnerProof(
  nodeId: string,
  owner: { address: string; signature: string },
): Promise<boolean> {
  const signer = await recoverSigner(ownerProofText(nodeId), owner.signature);
  return signer !== undefined && signer === owner.address.toLowerCase();
}
