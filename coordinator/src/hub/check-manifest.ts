import { type FrameOf, ProtocolError, verifyManifest } from '@gpumesh/protocol';

/**
 * A manifest the session accepts: signed by the node key, for this session's node, protocol
 * version and proven owner (NODE_PROTOCOL.md §6). Throws the protocol error that ends the session.
 */
export async function checkManifest(
  frame: FrameOf<'manifest'>,
  session: { nodeId: string; version: number; owner: string | null },
): Promise<void> {
  const { manifest } = frame;
  if (!(await verifyManifest(manifest, frame.signature))) {
    throw new ProtocolError('manifest_signature_invalid');
  }
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
