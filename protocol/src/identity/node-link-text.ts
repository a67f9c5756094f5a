import { recoverSigner } from './recover-signer.js';

/**
 * The exact text a node key signs (EIP-191) to consent to an owner wallet claiming it from the
 * dashboard (`gpumesh-node link --owner <address>`): the owner's session is the owner's consent,
 * this signature the node operator's. Binds both addresses, so it can't be reused for another owner.
 */
export function nodeLinkText(nodeId: string, owner: string): string {
  return ['gpumesh node link', `Node: ${nodeId.toLowerCase()}`, `Owner: ${owner.toLowerCase()}`].join('\n');
}

/** True when `signature` is `nodeId`'s signature of `nodeLinkText(nodeId, owner)`. */
export async function verifyNodeLink(nodeId: string, owner: string, signature: string): Promise<boolean> {
  const signer = await recoverSigner(nodeLinkText(nodeId, owner), signature);
  return signer !== undefined && signer === nodeId.toLowerCase();
}
