import { timingSafeEqual } from 'node:crypto';
import { type Metadata, status } from '@grpc/grpc-js';
import { type Hex, recoverMessageAddress } from 'viem';
import { peerCallMac } from './mac-peer-call.js';
import { peerCallText } from './peer-call-text.js';

/** Largest accepted distance between a call's timestamp and the server clock. */
export const DEFAULT_PEER_CALL_SKEW_MS = 60_000;

export type VerifyPeerCallOptions = {
  /** Addresses (any case) allowed to call; anyone else gets PERMISSION_DENIED. */
  trusted: readonly string[];
  /** Nonces seen within the skew window (the caller keeps it; entries older than 2 × skew may go). */
  seenNonces: Map<string, number>;
  /**
   * The secret this server shares with the replicas of its network: a call whose `x-gpumesh-mac`
   * verifies under it is a replica's, trusted whatever its caller field (macPeerCall.ts).
   */
  sharedSecret?: Uint8Array;
  now?: number;
  maxSkewMs?: number;
};

/** Why a call was refused, as a gRPC status. */
export type PeerCallRejection = { code: status.UNAUTHENTICATED | status.PERMISSION_DENIED; details: string };

/** The caller's lower-case address, or the gRPC status to refuse the call with. */
export async function verifyPeerCall(
  method: string,
  metadata: Metadata,
  options: VerifyPeerCallOptions,
): Promise<{ caller: string } | { rejection: PeerCallRejection }> {
  const now = options.now ?? Date.now();
  const maxSkewMs = options.maxSkewMs ?? DEFAULT_PEER_CALL_SKEW_MS;
  const field = (name: string) => {
    const value = metadata.get(`x-gpumesh-${name}`)[0];
    return typeof value === 'string' ? value : undefined;
  };
  const unauthenticated = (details: string) => ({
    rejection: { code: status.UNAUTHENTICATED, details } as const,
  });
  const caller = field('caller');
  const nonce = field('nonce');
  const timestamp = field('timestamp');
  const signature = field('signature');
  const mac = options.sharedSecret ? field('mac') : undefined;
  if (!caller || !nonce || !timestamp || !(signature || mac))
    return unauthenticated('missing x-gpumesh-* metadata');
  if (!/^[0-9a-f]{32,128}$/.test(nonce)) return unauthenticated('bad nonce');
  const at = Date.parse(timestamp);
  if (!Number.isFinite(at) || Math.abs(now - at) > maxSkewMs)
    return unauthenticated('timestamp outside the window');
  const text = peerCallText({ method, caller, nonce, timestamp });
  if (mac && options.sharedSecret) {
    const expected = Buffer.from(peerCallMac(text, options.sharedSecret), 'hex');
    const given = Buffer.from(mac, 'hex');
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
      return unauthenticated('bad mac');
    if (options.seenNonces.has(nonce)) return unauthenticated('nonce reused');
    options.seenNonces.set(nonce, now);
    return { caller: caller.toLowerCase() };
  }
  if (!signature) return unauthenticated('missing x-gpumesh-* metadata');
  const signer = await recoverSigner(text, signature);
  if (!signer || signer !== caller.toLowerCase()) return unauthenticated('bad signature');
  if (options.seenNonces.has(nonce)) return unauthenticated('nonce reused');
  options.seenNonces.set(nonce, now);
  if (!options.trusted.some((address) => address.toLowerCase() === signer)) {
    return { rejection: { code: status.PERMISSION_DENIED, details: 'caller not trusted' } };
  }
  return { caller: signer };
}

/** The lower-case address that signed `text` (EIP-191), or undefined for any bad signature. */
async function recoverSigner(text: string, signature: string): Promise<string | undefined> {
  try {
    return (await recoverMessageAddress({ message: text, signature: signature as Hex })).toLowerCase();
  } catch {
    // viem throws on malformed signatures and invalid curve points; to a server they are all "not signed".
    return undefined;
  }
}
