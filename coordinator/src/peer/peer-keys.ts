import { hkdfSync } from 'node:crypto';
import type { Kysely } from 'kysely';
import { privateKeyToAccount } from 'viem/accounts';
import { loadAppSecret } from '../auth/load-jwt-key.js';
import type { Clock } from '../clock.js';
import type { Database } from '../db/schema.js';
import type { Keyring } from '../wallets/keyring.js';

/** The app secret the replicas of one network share for peer-RPC (app_secrets). */
export const PEER_SECRET_NAME = 'peer-rpc-secret';

export type PeerKeys = {
  /** The replicas' peer address: the caller their calls name. */
  caller: string;
  /** The key of the MACs on their calls and announcements. */
  macKey: Buffer;
};

/** The keys of the network's shared peer secret, each through its own derivation. */
export function derivePeerKeys(secret: Uint8Array): PeerKeys {
  const derive = (label: string) => Buffer.from(hkdfSync('sha256', secret, new Uint8Array(0), label, 32));
  return {
    caller: privateKeyToAccount(`0x${derive('gpumesh peer-rpc secp256k1').toString('hex')}`).address,
    macKey: derive('gpumesh peer-rpc mac'),
  };
}

/**
 * The peer keys of the network this database belongs to: its shared secret is created by the first
 * replica to start and kept encrypted under the master key, like the JWT key.
 */
export async function loadPeerKeys(db: Kysely<Database>, keyring: Keyring, clock: Clock): Promise<PeerKeys> {
  return derivePeerKeys(await loadAppSecret(db, keyring, clock, PEER_SECRET_NAME, 32));
}
