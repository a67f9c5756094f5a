/** The exact text an owner wallet signs (EIP-191) to claim a node: binds the stake to the node id. */
export function ownerProofText(nodeId: string): string {
  return ['gpumesh node owner', `Node: ${nodeId.toLowerCase()}`].join('\n');
}
