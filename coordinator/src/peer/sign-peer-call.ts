import type { MessageSigner } from '@gpumesh/protocol';
import type { Metadata } from '@grpc/grpc-js';
import { newPeerCall, peerCallMetadata, peerCallText } from './peer-call-text.js';

/** Metadata that authenticates one call to `method` as `caller` (see NODE_PROTOCOL.md, peer-RPC). */
export async function signPeerCall(
  method: string,
  caller: MessageSigner,
  now = Date.now(),
): Promise<Metadata> {
  const call = newPeerCall(method, caller.address, now);
  return peerCallMetadata(call, { signature: await caller.signMessage({ message: peerCallText(call) }) });
}
