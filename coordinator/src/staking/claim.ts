import { randomUUID } from 'node:crypto';
import type { Hex } from 'viem';
import { NATIVE_TRANSFER_GAS } from '../chain/constants.js';
import { enqueueTransfer } from '../chain/enqueue-transfer.js';
import type { TransferOutbox } from '../chain/transfer-outbox.js';
import { OPEN_TRANSFER, TRANSFER_STATUS } from '../db/tables/chain.js';
import { ApiError } from '../errors.js';
import { getWallets } from '../wallets/get-wallets.js';
import { CLAIM_PURPOSE } from './claim-transfers.js';
import {
  currentRewardIndex,
  lockPosition,
  type StoredPosition,
  savePosition,
  toSeconds,
} from './position-store.js';
import { claimableWei, REWARD_SCALE, settlePosition } from './rewards.js';
import type { StakingDeps } from './stake.js';

export type ClaimDeps = StakingDeps & {
  /** The outbox, with claimTransfers registered for 'claim'. */
  outbox: TransferOutbox;
};

import { type StakeView, stakeView } from './stake-view.js';
import { formatTokenAmount } from './token-amount.js';

/**
 * Pays the claimable rewards from the rewards vault to the user's proxy wallet by a real transfer,
 * once, through the transfer outbox: the amount is taken off the position, recorded as a pending
 * reward payout and its transfer enqueued in one transaction before anything is sent, so
 * concurrent claims cannot pay twice. How the transfer ends settles the payout (claim-transfers.ts):
 * paid when mined; the amount back to the position when it can never land. A transfer still open
 * (its receipt wait timed out) answers its hash; the outbox's sweep finishes it.
 * Nothing claimable: `{ txId: null, claimed: "0.0000 SYM" }`, nothing sent.
 */
export async function claim(
  { db, services, clock, outbox }: ClaimDeps,
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
    if (amount === 0n) return { amount, position, transferId: null };
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
    const transferId = await enqueueTransfer(trx, {
      purpose: CLAIM_PURPOSE,
      ref: payoutId,
      from: vault.address,
      to: wallets.proxyAddress,
      valueWei: amount,
      gas: NATIVE_TRANSFER_GAS,
      asset: 'native',
      amount,
      now: nowMs,
    });
    return { amount, position, transferId };
  });
  const { amount, transferId } = reserved;
  const position: StoredPosition = reserved.position;
  if (amount === 0n || !transferId) {
    return {
      txId: null,
      claimed: formatTokenAmount(0n, services.nativeSymbol),
      stake: stakeView(services, position, position.tier),
    };
  }
  const { transfer, error } = await outbox.process(transferId);
  const ended = !(OPEN_TRANSFER as readonly string[]).includes(transfer.status);
  if (transfer.status !== TRANSFER_STATUS.mined && (ended || !transfer.tx_hash)) {
    throw error ?? new ApiError('chain_unavailable');
  }
  return {
    txId: transfer.tx_hash as Hex,
    claimed: formatTokenAmount(amount, services.nativeSymbol),
    stake: stakeView(services, position, position.tier),
  };
}
