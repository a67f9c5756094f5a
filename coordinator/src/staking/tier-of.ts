import { TIER_NAMES, type TierName } from '@gpumesh/protocol';
import type { Kysely } from 'kysely';
import { getAddress, isAddress } from 'viem';
import type { Database } from '../db/schema.js';

/**
 * The tier a wallet's stake reaches, for the hub (a node's owner, proven in its manifest). The
 * stake ledger records the tier with every change, so this is one indexed read. Unknown wallets,
 * and tier names outside the protocol's ladder, are 'none'.
 */
export async function tierOf(db: Kysely<Database>, ownerAddress: string): Promise<TierName> {
  if (!isAddress(ownerAddress, { strict: false })) return 'none';
  const row = await db
    .selectFrom('stakes')
    .select('tier')
    .where('address', '=', getAddress(ownerAddress))
    .executeTakeFirst();
  const tier = row?.tier;
  return tier && (TIER_NAMES as readonly string[]).includes(tier) ? (tier as TierName) : 'none';
}
