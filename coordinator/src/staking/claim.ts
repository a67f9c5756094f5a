import { randomUUID } from 'node:crypto';
import type { Hex } from 'viem';
import { sendTransaction } from '../chain/send-transaction.js';
import { ApiError } from '../errors.js';
import { getWallets } from '../wallets/get-wallets.js';
import {
  currentRewardIndex,
  lockPosition,
  type StoredPosition,
  savePosition,
  toSeconds,
} from './position-store.js';
import { claimableWei, REWARD_SCALE, settlePosition } from './rewards.js';
import type { StakingDeps } from './stake.js';
import { type StakeView, stakeView } from './stake-view.js';
import { formatTokenAmount } from './token-amount.js';

/**
 * Pays the claimable rewards from the rewards vault to the user's proxy wallet by a real transfer,
 * once: the amount is taken off the position and recorded as a pending payout in one transaction
 * before anything is sent, so concurrent claims cannot pay twice. If the transfer is never
 * broadcast the amount goes back to the position; once broadcast it stays paid out.
 * Nothing claimable: `{ txId: null, claimed: "0.0000 SYM" }`, nothing sent.
 */
export async function claim(
  { db, services, clock }: StakingDeps,
  { user }: { user: { id: string; address: string } },
): Promise<{ txId: Hex | null; claimed: string; stake: StakeView }> {
  const vault = services.rewardsVault;
  if (!vault?.account)
    throw new ApiError('chain_unavailable', 'Rewards are not configured on this coordinator.');
  const wallets = await getWallets(db, user.id);
  if (!wallets) throw new ApiError('not_found', 'This user has no proxy wallet yet.');
  const reserved = await db.transaction().execute(async (trx) => {
    const nowMs = clock.now();
    const index = await currentRewardIndex(trx, services, toSeconds(nowMs));
    const settled = settlePosition(await lockPosition(trx, services, user, index, nowMs), index);
    const amount = claimableWei(settled);
    const position = await savePosition(
      trx,
      services,
      { ...settled, accruedScaled: settled.accruedScaled - amount * REWARD_SCALE },
      nowMs,
    );
    if (amount === 0n) return { amount, position, payoutId: null };
    const payoutId = randomUUID();
    await trx
      .insertInto('reward_payouts')
      .values({
        id: payoutId,
        user_id: user.id,
        amount_wei: amount.toString(),
        status: 'pending',
        tx_hash: null,
        created_at: nowMs,
      })
      .execute();
    return { amount, position, payoutId };
  });
  const { amount, payoutId } = reserved;
  const position: StoredPosition = reserved.position;
  if (amount === 0n || !payoutId) {
    return {
      txId: null,
      claimed: formatTokenAmount(0n, services.nativeSymbol),
      stake: stakeView(services, position, position.tier),
    };
  }
  let broadcast = false;
  let hash: Hex;
  try {
    ({ hash } = await sendTransaction(services.context, {
      account: vault.account,
      to: wallets.proxyAddress,
      value: amount,
      onBroadcast: async (sent) => {
        broadcast = true;
        await db.updateTable('reward_payouts').set({ tx_hash: sent }).where('id', '=', payoutId).execute();
      },
    }));
  } catch (error) {
    if (!broadcast) {
      // Never left this process: the reward goes back to the position.
      await db.transaction().execute(async (trx) => {
        const nowMs = clock.now();
        const index = await currentRewardIndex(trx, services, toSeconds(nowMs));
        const current = await lockPosition(trx, services, user, index, nowMs);
        await savePosition(
          trx,
          services,
          { ...current, accruedScaled: current.accruedScaled + amount * REWARD_SCALE },
          nowMs,
        );
        await trx
          .updateTable('reward_payouts')
          .set({ status: 'failed' })
          .where('id', '=', payoutId)
          .execute();
      });
    }
    throw error;
  }
  const nowMs = clock.now();
  await db.transaction().execute(async (trx) => {
    await trx
      .updateTable('reward_payouts')
      .set({ status: 'paid', tx_hash: hash })
      .where('id', '=', payoutId)
      .execute();
    await trx
      .insertInto('stake_events')
      .values({
        id: randomUUID(),
        user_id: user.id,
        kind: 'claim',
        amount_wei: amount.toString(),
        tx_hash: hash,
        created_at: nowMs,
      })
      .execute();
  });
  return {
    txId: hash,
    claimed: formatTokenAmount(amount, services.nativeSymbol),
    stake: stakeView(services, position, position.tier),
  };
}
