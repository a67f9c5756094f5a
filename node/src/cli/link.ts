import type { NodeConfig } from '../config.js';
import { NodeError } from '../errors.js';
import type { CommandInput } from './parse-args.js';

/**
 * `gpumesh-node link --owner 0x…`: the node key's signature of `nodeLinkText(nodeId, owner)`, its
 * consent to the owner's claim (pasted into the dashboard).
 * @throws NodeError `config_invalid` when --owner is not an address.
 */
export async function link(config: NodeConfig, { values }: CommandInput): Promise<number> {
  const owner = values.owner;
  if (!owner || !/^0x[0-9a-fA-F]{40}$/.test(owner)) {
    throw new NodeError('config_invalid', {
      detail: '--owner: the owner wallet address (0x and 40 hex digits).',
    });
  }
  const [{ nodeLinkText }, { nodeKeyPath }, { loadNodeIdentity }] = await Promise.all([
    import('@gpumesh/protocol/internal'),
    import('../daemon.js'),
    import('../identity.js'),
  ]);
  const identity = await loadNodeIdentity(nodeKeyPath(config));
  const nodeSignature = await identity.account.signMessage({ message: nodeLinkText(identity.nodeId, owner) });
  if (values.json) {
    console.log(JSON.stringify({ nodeId: identity.nodeId, owner: owner.toLowerCase(), nodeSignature }));
    return 0;
  }
  console.log(`node      ${identity.nodeId}\nowner     ${owner.toLowerCase()}\nsignature ${nodeSignature}`);
  console.error(
    '\nSigned in with the owner wallet, paste the signature into the dashboard (or POST /api/provider/nodes/link).',
  );
  return 0;
}
