import { canonicalJson, type FrameOf, ProtocolError, verifyManifest } from '@gpumesh/protocol';
import type { VerifiedSignatures } from './verified-signatures.js';

/**
 * A manifest the session accepts: signed by the node key, for this session's node, protocol
 * version and proven owner (NODE_PROTOCOL.md §6). Throws the protocol error that ends the session.
 * With `verified`, a manifest and signature verified before (the node reconnects) is not recovered again.
 */
export async function checkManifest(
  frame: FrameOf<'manifest'>,
  session: { nodeId: string; version: number; owner: string | null },
  verified?: VerifiedSignatures,
): Promise<void> {
  const { manifest, signature } = frame;
  const check = () => verifyManifest(manifest, signature);
  let ok: boolean;
  try {
    // The signed text names the node (manifest.nodeId, which the signer must be).
    ok = verified ? await verified.verify(canonicalJson(manifest), signature, check) : await check();
  } catch {
    ok = false; // a manifest canonical JSON cannot carry
  }
  if (!ok) throw new ProtocolError('manifest_signature_invalid');
  if (manifest.nodeId.toLowerCase() !== session.nodeId.toLowerCase()) {
    throw new ProtocolError('manifest_rejected', 'nodeId differs from the session.');
  }
  if (manifest.protocolVersion !== session.version) {
    throw new ProtocolError('manifest_rejected', 'protocolVersion differs from the session.');
  }
  if (manifest.owner && manifest.owner.toLowerCase() !== session.owner?.toLowerCase()) {
    throw new ProtocolError('manifest_rejected', 'owner differs from the proven owner.');
  }
}
