import type { Manifest } from '../manifest.js';
import { canonicalJson } from './canonical-json.js';
import { recoverSigner } from './recover-signer.js';

/** True when `signature` is the signature of `canonicalJson(manifest)` by `manifest.nodeId`. */
export async function verifyManifest(manifest: Manifest, signature: string): Promise<boolean> {
  let text: string;
  try {
    text = canonicalJson(manifest);
  } catch {
    return false;
  }
  const signer = await recoverSigner(text, signature);
  return signer !== undefined && signer === manifest.nodeId.toLowerCase();
}
