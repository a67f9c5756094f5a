import { createHmac } from 'node:crypto';
import type { Metadata } from '@grpc/grpc-js';
import { newPeerCall, peerCallMetadata, peerCallText } from './peer-call-text.js';

/** HMAC-SHA256, hex, of a call's text under the replicas' shared peer secret. */
export function peerCallMac(text: string, secret: Uint8Array): string {
  return createHmac('sha256', secret).update(text).digest('hex');
}

/**
 * Metadata that authenticates one call to `method` between replicas that share `secret`
 * (NODE_PROTOCOL.md §11): the same caller, nonce and timestamp as a signed call, with
 * `x-gpumesh-mac` — an HMAC-SHA256 of the call text — in place of the EIP-191 signature. Microseconds
 * instead of the ~1 ms a signature and the ~5 ms a recovery cost, per call.
 */
export function macPeerCall(method: string, caller: string, secret: Uint8Array, now = Date.now()): Metadata {
  const call = newPeerCall(method, caller, now);
  return peerCallMetadata(call, { mac: peerCallMac(peerCallText(call), secret) });
}
