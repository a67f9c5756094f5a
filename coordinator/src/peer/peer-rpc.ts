/** What the peer-RPC client and server share: the service definition and JSON parsing. */
import type { ServiceClientConstructor } from '@grpc/grpc-js';
import { loadPeerProto } from './load-peer-proto.js';

/** The PeerRpc service, loaded from the .proto once per process (client and server share it). */
let PeerRpc: ServiceClientConstructor | undefined;
export const peerRpc = (): ServiceClientConstructor => {
  PeerRpc ??= loadPeerProto();
  return PeerRpc;
};

/** A JSON object, or undefined when the text is not one. */
export function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
