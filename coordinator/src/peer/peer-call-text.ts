import { randomBytes } from 'node:crypto';
import { Metadata } from '@grpc/grpc-js';

/** The fields a peer-RPC caller signs, carried as `x-gpumesh-*` metadata. */
export type PeerCall = {
  /** Full method path, e.g. /gpumesh.peer.v0.PeerRpc/Infer. */
  method: string;
  caller: string;
  nonce: string;
  /** RFC 3339 UTC. */
  timestamp: string;
};

/** The exact text a peer-RPC caller signs (EIP-191): lines joined by `\n`, caller lower-case. */
export function peerCallText(call: PeerCall): string {
  return [
    'gpumesh peer-rpc',
    `Method: ${call.method}`,
    `Caller: ${call.caller.toLowerCase()}`,
    `Nonce: ${call.nonce}`,
    `Timestamp: ${call.timestamp}`,
  ].join('\n');
}

/** A new call to `method` by `caller`: a fresh 128-bit nonce and the time `now`. */
export function newPeerCall(method: string, caller: string, now = Date.now()): PeerCall {
  return { method, caller, nonce: randomBytes(16).toString('hex'), timestamp: new Date(now).toISOString() };
}

/** The call's `x-gpumesh-*` metadata, with its proof: an EIP-191 signature, or a replicas' MAC. */
export function peerCallMetadata(call: PeerCall, proof: { signature: string } | { mac: string }): Metadata {
  const metadata = new Metadata();
  metadata.set('x-gpumesh-caller', call.caller);
  metadata.set('x-gpumesh-nonce', call.nonce);
  metadata.set('x-gpumesh-timestamp', call.timestamp);
  if ('signature' in proof) metadata.set('x-gpumesh-signature', proof.signature);
  else metadata.set('x-gpumesh-mac', proof.mac);
  return metadata;
}
