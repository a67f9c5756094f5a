/**
 * How reward claims ride the transfer outbox (chain/transfer-outbox.ts): the rewards vault signs;
 * the reward payout gets the hash once broadcast and ends with the transfer — paid, with a `claim`
 * stake event, when mined; failed, and the amount back to the position, when it can never land
 * (reverted, replaced, cancelled).
 */
import { randomUUID } from 'node:crypto';
import type { ChainServices } from '../chain/create-chain-services.js';
import type { TransferHandler } from '../chain/transfer-types.js';
import type { Clock } from '../clock.js';
import { ApiError } from '../errors.js';
import { currentRewardIndex, lockPosition, savePosition, toSeconds } from './position-store.js';
import { REWARD_SCALE } from './rewards.js';

/** The outbox purpose of reward claims. */
export const CLAIM_PURPOSE = 'claim';

/** The claim use of the transfer outbox. */
export function claimTransfers(services: ChainServices, clock: Clock): TransferHandler {
  return {
    async signer() {
      const vault = services.rewardsVault?.account;
      if (!vault) throw new ApiError('chain_unavailable', 'Rewards are not configured on this coordinator.');
      return vault;
    },
    async progress(trx, transfer, status) {
      if (status !== 'broadcast') return;
      await trx
        .updateTable('reward_payouts')
        .set({ tx_hash: transfer.tx_hash })
        .where('id', '=', transfer.ref)
        .execute();
    },
    async settle(trx, transfer, outcome) {
      const payout = await trx
        .updateTable('reward_payouts')
        .set({
          status: outcome === 'mined' ? 'paid' : 'failed',
          tx_hash: outcome === 'mined' ? transfer.tx_hash : null,
        })
        .where('id', '=', transfer.ref)
        .where('status', '=', 'pending')
        .returning(['user_id', 'amount_wei'])
        .executeTakeFirst();
      if (!payout) return;
      const nowMs = clock.now();
      const amount = BigInt(payout.amount_wei);
      if (outcome === 'mined') {
        await trx
          .insertInto('stake_events')
          .values({
            id: randomUUID(),
            user_id: payout.user_id,
            kind: 'claim',
            amount_wei: payout.amount_wei,
            tx_hash: transfer.tx_hash,
            created_at: nowMs,
          })
          .execute();
        return;
      }
      // Never paid: the reward goes back to the position.
      const user = await trx
        .selectFrom('users')
        .select(['id', 'address'])
        .where('id', '=', payout.user_id)
        .executeTakeFirstOrThrow();
      const index = await currentRewardIndex(trx, services, toSeconds(nowMs));
      const current = await lockPosition(trx, services, user, index, nowMs);
      await savePosition(
        trx,
        services,
        { ...current, accruedScaled: current.accruedScaled + amount * REWARD_SCALE },
        nowMs,
      );
    },
  };
}
