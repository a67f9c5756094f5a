import { randomUUID } from 'node:crypto';
import { sendTransaction } from '../chain/send-transaction.js';
import { getWallets } from '../wallets/get-wallets.js';
import type { StakingDeps } from './stake.js';

/** Most unbondings one pass releases (the next pass takes the rest). */
export const RELEASE_BATCH_SIZE = 50;

/**
 * Returns every unbonding whose period has passed (of one user, or of everyone) from the staking
 * vault to the owner's proxy wallet. Each row is claimed (unbonding → releasing) before its
 * transfer, so two replicas never pay it twice; a transfer that was never broadcast puts it back.
 * Returns how many were released.
 */
export async function releaseUnbonded(
  { db, services, clock }: StakingDeps,
  { userId }: { userId?: string } = {},
): Promise<number> {
  const vault = services.stakingVault?.account;
  if (!vault) return 0;
  let query = db
    .selectFrom('unbondings')
    .selectAll()
    .where('status', '=', 'unbonding')
    .where('release_at', '<=', clock.now())
    .orderBy('release_at')
    .limit(RELEASE_BATCH_SIZE);
  if (userId) query = query.where('user_id', '=', userId);
  const due = await query.execute();
  let released = 0;
  for (const row of due) {
    const claimed = await db
      .updateTable('unbondings')
      .set({ status: 'releasing' })
      .where('id', '=', row.id)
      .where('status', '=', 'unbonding')
      .executeTakeFirst();
    if (claimed.numUpdatedRows !== 1n) continue;
    const wallets = await getWallets(db, row.user_id);
    if (!wallets) continue;
    let broadcast = false;
    try {
      const { hash } = await sendTransaction(services.context, {
        account: vault,
        to: wallets.proxyAddress,
        value: BigInt(row.amount_wei),
        onBroadcast: async (sent) => {
          broadcast = true;
          await db.updateTable('unbondings').set({ tx_hash: sent }).where('id', '=', row.id).execute();
        },
      });
      await db.transaction().execute(async (trx) => {
        await trx
          .updateTable('unbondings')
          .set({ status: 'released', tx_hash: hash })
          .where('id', '=', row.id)
          .execute();
        await trx
          .insertInto('stake_events')
          .values({
            id: randomUUID(),
            user_id: row.user_id,
            kind: 'release',
            amount_wei: row.amount_wei,
            tx_hash: hash,
            created_at: clock.now(),
          })
          .execute();
      });
      released++;
    } catch {
      // Not broadcast: try again on the next pass. Broadcast but unconfirmed: stays 'releasing'
      // with its hash for an operator to reconcile (never sent twice).
      if (!broadcast) {
        await db.updateTable('unbondings').set({ status: 'unbonding' }).where('id', '=', row.id).execute();
      }
    }
  }
  return released;
}
