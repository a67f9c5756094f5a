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
