import type { Kysely } from 'kysely';
import type { ChainServices } from '../chain/create-chain-services.js';
import { tierFor } from '../chain/tiers.js';
import type { Clock } from '../clock.js';
import type { Database } from '../db/schema.js';
import { findPositionByAddress, readRewardIndex, toSeconds } from './position-store.js';
import { rewardIndexAt, settlePosition } from './rewards.js';
import { type StakeView, stakeView } from './stake-view.js';
import { formatTokenAmount } from './token-amount.js';

/**
 * The public stake record of a wallet (its connected address, checksummed): quantity, tier and
 * claimable rewards as of now (read-only; nothing is settled). Unknown wallets have nothing staked.
 * Also lists unstaked amounts still unbonding.
 */
export async function getStake(
  db: Kysely<Database>,
  services: ChainServices,
  clock: Clock,
  address: string,
): Promise<{ stake: StakeView; unbonding: { amount: string; releaseAt: string }[] }> {
  const nowS = toSeconds(clock.now());
  const position = await findPositionByAddress(db, address);
  const none = tierFor(0n, services.tiers).name;
  if (!position) return { stake: stakeView(services, null, none), unbonding: [] };
  const index = rewardIndexAt(await readRewardIndex(db, services, nowS), nowS);
  const unbonding = await db
    .selectFrom('unbondings')
    .select(['amount_wei', 'release_at'])
    .where('user_id', '=', position.userId)
    .where('status', '!=', 'released')
    .orderBy('release_at')
    .execute();
  return {
    stake: stakeView(services, settlePosition(position, index), position.tier),
    unbonding: unbonding.map((u) => ({
      amount: formatTokenAmount(BigInt(u.amount_wei), services.nativeSymbol),
      releaseAt: new Date(Number(u.release_at)).toISOString(),
    })),
  };
}
