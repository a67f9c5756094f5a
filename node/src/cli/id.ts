import type { NodeConfig } from '../config.js';
import type { CommandInput } from './parse-args.js';

/** `gpumesh-node id`: the node id (the node key's address) and the text an owner wallet signs. */
export async function id(config: NodeConfig, { values }: CommandInput): Promise<number> {
  const [{ ownerProofText }, { nodeKeyPath }, { loadNodeIdentity }] = await Promise.all([
    import('@gpumesh/protocol'),
    import('../daemon.js'),
    import('../identity.js'),
  ]);
  const identity = await loadNodeIdentity(nodeKeyPath(config));
  if (values.json) {
    console.log(JSON.stringify({ nodeId: identity.nodeId, ownerProofText: ownerProofText(identity.nodeId) }));
    return 0;
  }
  console.log(identity.nodeId);
  console.error(
    `\nTo link this node to your staking wallet, sign this exact text with it (personal_sign) and set\n` +
      `--owner-address and --owner-signature:\n\n${ownerProofText(identity.nodeId)}\n`,
  );
  return 0;
}
