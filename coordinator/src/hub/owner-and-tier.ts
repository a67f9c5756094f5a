import {
  type FrameOf,
  ownerProofText,
  ProtocolError,
  TIER_NAMES,
  type TierName,
  verifyOwnerProof,
} from '@gpumesh/protocol';
import type { VerifiedSignatures } from './verified-signatures.js';

/** What resolving a node's owner needs from the hub (a SessionHost has it). */
export type OwnerLookup = {
  /** The owner's staking tier (staking/, through the composition root). */
  readonly tierOf: (owner: string) => Promise<TierName>;
  /** A node proved its owner: record the link (its earlier earnings follow, provider/link-node.ts). */
  readonly onOwnerProved: ((nodeId: string, owner: string) => void) | undefined;
  /** The owner a node was linked to from the dashboard, for a node that names none itself. */
  readonly ownerOf: ((nodeId: string) => Promise<string | undefined>) | undefined;
  /** Signatures verified before (a reconnecting node's owner proof is not recovered again). */
  readonly verified?: VerifiedSignatures | undefined;
};

/**
 * A node's owner at `auth` — the proof it sent (checked), else the owner it was linked to from the
 * dashboard — and the staking tier that owner's stake gives (none without an owner, or when
 * staking cannot be read: the node is routed at the lowest tier rather than refused).
 */
export async function ownerAndTier(
  hub: OwnerLookup,
  nodeId: string,
  proof: FrameOf<'auth'>['owner'],
): Promise<{ owner: string | null; tier: TierName }> {
  let owner: string | null;
  if (proof) {
    const check = () => verifyOwnerProof(nodeId, proof);
    // The claimed address is part of what is remembered: the signed text does not name it.
    const key = `${ownerProofText(nodeId)}\nOwner: ${proof.address.toLowerCase()}`;
    if (!(await (hub.verified ? hub.verified.verify(key, proof.signature, check) : check()))) {
      throw new ProtocolError('auth_failed', 'The owner proof is not valid.');
    }
    owner = proof.address;
    hub.onOwnerProved?.(nodeId, owner);
  } else {
    // Linked from the dashboard with the node key's consent (provider/provider-routes.ts); what
    // it earned after the link and before this connection follows too.
    owner = (await hub.ownerOf?.(nodeId).catch(() => undefined)) ?? null;
    if (owner) hub.onOwnerProved?.(nodeId, owner);
  }
  let tier: TierName = 'none';
  if (owner) {
    try {
      const t = await hub.tierOf(owner);
      if ((TIER_NAMES as readonly string[]).includes(t)) tier = t;
    } catch {
      tier = 'none';
    }
  }
  return { owner, tier };
}
