import { randomUUID } from 'node:crypto';
import { ApiError } from '../errors.js';
import { currentRewardIndex, lockPosition, savePosition, toSeconds } from './position-store.js';
import { settlePosition } from './rewards.js';
import type { StakingDeps } from './stake.js';
import { type StakeView, stakeView } from './stake-view.js';
import { formatTokenAmount } from './token-amount.js';

export type UnbondingView = { id: string; amount: string; releaseAt: string };

/**
 * Unstakes: the quantity (and so the tier and the reward rate) drops at once, after settling the
 * pending rewards; the tokens return from the staking vault to the proxy wallet once the unbonding
 * period has passed (releaseUnbonded). More than the staked quantity: 400, nothing changes.
 */
export async function unstake(
  { db, services, clock }: StakingDeps,
  { user, amountWei }: { user: { id: string; address: string }; amountWei: bigint },
): Promise<{ unbonding: UnbondingView; stake: StakeView }> {
  if (amountWei <= 0n)
    throw new ApiError('invalid_request', 'The amount must be positive.', { param: 'params.1' });
  return db.transaction().execute(async (trx) => {
    const nowMs = clock.now();
    const index = await currentRewardIndex(trx, services, toSeconds(nowMs));
    const settled = settlePosition(await lockPosition(trx, services, user, index, nowMs), index);
    if (settled.quantityWei < amountWei) {
      throw new ApiError(
        'invalid_request',
        `Only ${formatTokenAmount(settled.quantityWei, services.nativeSymbol)} is staked.`,
        { param: 'params.1' },
      );
    }
    const position = await savePosition(
      trx,
      services,
      { ...settled, quantityWei: settled.quantityWei - amountWei },
      nowMs,
    );
    const id = randomUUID();
    const releaseAt = nowMs + services.unbondingPeriodMs;
    await trx
      .insertInto('unbondings')
      .values({
        id,
        user_id: user.id,
        amount_wei: amountWei.toString(),
        release_at: releaseAt,
        status: 'unbonding',
        tx_hash: null,
        created_at: nowMs,
      })
      .execute();
    await trx
      .insertInto('stake_events')
      .values({
        id: randomUUID(),
        user_id: user.id,
        kind: 'unstake',
        amount_wei: amountWei.toString(),
        tx_hash: null,
        created_at: nowMs,
      })
      .execute();
    return {
      unbonding: {
        id,
        amount: formatTokenAmount(amountWei, services.nativeSymbol),
        releaseAt: new Date(releaseAt).toISOString(),
      },
      stake: stakeView(services, position, position.tier),
    };
  });
}
