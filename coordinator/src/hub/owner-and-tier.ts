import { type FrameOf, ProtocolError, TIER_NAMES, type TierName, verifyOwnerProof } from '@gpumesh/protocol';

/** What resolving a node's owner needs from the hub (a SessionHost has it). */
export type OwnerLookup = {
  /** The owner's staking tier (staking/, through the composition root). */
  readonly tierOf: (owner: string) => Promise<TierName>;
  /** A node proved its owner: record the link (its earlier earnings follow, provider/link-node.ts). */
  readonly onOwnerProved: ((nodeId: string, owner: string) => void) | undefined;
  /** The owner a node was linked to from the dashboard, for a node that names none itself. */
  readonly ownerOf: ((nodeId: string) => Promise<string | undefined>) | undefined;
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
    if (!(await verifyOwnerProof(nodeId, proof))) {
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
