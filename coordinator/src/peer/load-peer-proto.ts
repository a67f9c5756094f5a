import { createRequire } from 'node:module';
import { type GrpcObject, loadPackageDefinition, type ServiceClientConstructor } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';

/**
 * Absolute path of the service definition. The .proto is part of the published protocol
 * (NODE_PROTOCOL.md §11 specifies it for any gRPC implementation), so it ships in @gpumesh/protocol;
 * the TypeScript that loads, signs and verifies calls is the coordinator's own.
 */
export const PEER_PROTO_PATH = createRequire(import.meta.url).resolve(
  '@gpumesh/protocol/proto/gpumesh.proto',
);

/** The full name of the service, and the method paths callers sign (see peerCallText). */
export const PEER_SERVICE = 'gpumesh.peer.v0.PeerRpc';
export const PEER_METHODS = {
  Infer: `/${PEER_SERVICE}/Infer`,
  Embed: `/${PEER_SERVICE}/Embed`,
  GetManifest: `/${PEER_SERVICE}/GetManifest`,
  Ping: `/${PEER_SERVICE}/Ping`,
} as const;

/** Loader options: field names as in the .proto, uint64 as JS numbers, oneof name in `event`/`outcome`. */
export const PEER_PROTO_OPTIONS = {
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
};

/**
 * Loads the peer-RPC service with @grpc/proto-loader. `PeerRpc.service` goes to
 * `server.addService`; `new PeerRpc(address, credentials)` is a client.
 */
export function loadPeerProto(): ServiceClientConstructor {
  const definition = loadSync(PEER_PROTO_PATH, PEER_PROTO_OPTIONS);
  const root = loadPackageDefinition(definition);
  const pkg = ((root.gpumesh as GrpcObject).peer as GrpcObject).v0 as GrpcObject;
  return pkg.PeerRpc as ServiceClientConstructor;
}
