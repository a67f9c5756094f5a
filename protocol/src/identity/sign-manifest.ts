import type { Manifest } from '../manifest.js';
import { canonicalJson } from './canonical-json.js';
import type { Hex, MessageSigner } from './signer.js';

/** The manifest frame's `signature`: the node key signs (EIP-191) `canonicalJson(manifest)`. */
export function signManifest(manifest: Manifest, node: MessageSigner): Promise<Hex> {
  return node.signMessage({ message: canonicalJson(manifest) });
}
