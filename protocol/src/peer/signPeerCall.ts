import { randomBytes } from 'node:crypto';
import { Metadata } from '@grpc/grpc-js';
import type { MessageSigner } from '../identity/signer.js';
import { peerCallText } from './peerCallText.js';

/** Metadata that authenticates one call to `method` as `caller` (see NODE_PROTOCOL.md, peer-RPC). */
export async function signPeerCall(
  method: string,
  caller: MessageSigner,
  now = Date.now(),
): Promise<Metadata> {
  const call = {
    method,
    caller: caller.address,
    nonce: randomBytes(16).toString('hex'),
    timestamp: new Date(now).toISOString(),
  };
  const metadata = new Metadata();
  metadata.set('x-gpumesh-caller', call.caller);
  metadata.set('x-gpumesh-nonce', call.nonce);
  metadata.set('x-gpumesh-timestamp', call.timestamp);
  metadata.set('x-gpumesh-signature', await caller.signMessage({ message: peerCallText(call) }));
  return metadata;
}
