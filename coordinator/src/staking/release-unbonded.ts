import type { OutboxLog } from '../chain/transfer-types.js';
import { TRANSFER_STATUS, UNBONDING_STATUS } from '../db/tables/chain.js';
import { getWallets } from '../wallets/get-wallets.js';
import { enqueuePoolCall } from './enqueue-pool-call.js';
import { POOL_PURPOSES } from './pool-transfers.js';
import type { StakingDeps } from './staking-deps.js';

/** Most owners one pass withdraws for (the next pass takes the rest). */
export const RELEASE_BATCH_SIZE = 50;

/**
 * After a withdraw refused before signing (the proxy wallet cannot pay the gas, say), the owner's
 * next try waits this long: passes every few seconds would otherwise record a refusal each.
 */
export const RELEASE_RETRY_AFTER_REFUSAL_MS = 10 * 60_000;

export type ReleaseDeps = Omit<StakingDeps, 'keyring'> & { log: OutboxLog };

/**
 * Withdraws, for every owner (or one) with an unbonding whose release time has come on the pool's
 * clock (the latest block's time), what the staking pool releases: the owner's proxy wallet calls
 * `withdraw()` through the transfer outbox, and the pool pays every due unbonding back to it. In one
 * transaction the owner's due rows move unbonding → releasing and the call is enqueued (so two
 * replicas never send it twice); its Withdrawn event marks the rows it paid released, and what it
 * did not pay waits again (pool-transfers.ts); an owner whose last withdraw was refused before
 * signing waits RELEASE_RETRY_AFTER_REFUSAL_MS (unless asked for by name). Errors are logged and the
 * pass goes on with the next owner. Returns how many withdraws were mined.
 */
export async function releaseUnbonded(
  { db, services, clock, outbox, log }: ReleaseDeps,
  { userId }: { userId?: string } = {},
): Promise<number> {
  const pool = services.stakingPool;
  if (!pool) return 0;
  const dueMs = Number(await pool.now()) * 1000;
  let query = db
    .selectFrom('unbondings')
    .select('user_id')
    .distinct()
    .where('status', '=', UNBONDING_STATUS.unbonding)
    .where('release_at', '<=', dueMs)
    .limit(RELEASE_BATCH_SIZE);
  if (userId) query = query.where('user_id', '=', userId);
  const owners = await query.execute();
  let released = 0;
  for (const { user_id } of owners) {
    try {
      const refused = await db
        .selectFrom('chain_transfers')
        .select('id')
        .where('purpose', '=', POOL_PURPOSES.withdraw)
        .where('ref', '=', user_id)
        .where('status', '=', TRANSFER_STATUS.cancelled)
        .where('updated_at', '>', clock.now() - RELEASE_RETRY_AFTER_REFUSAL_MS)
        .executeTakeFirst();
      if (refused && !userId) continue;
      const wallets = await getWallets(db, user_id);
      if (!wallets) {
        log.error({ user: user_id }, 'release: the user has no proxy wallet; left unbonding');
        continue;
      }
      const transferId = await db.transaction().execute(async (trx) => {
        const claimed = await trx
          .updateTable('unbondings')
          .set({ status: UNBONDING_STATUS.releasing })
          .where('user_id', '=', user_id)
          .where('status', '=', UNBONDING_STATUS.unbonding)
          .where('release_at', '<=', dueMs)
          .executeTakeFirst();
        if (claimed.numUpdatedRows === 0n) return undefined;
        return enqueuePoolCall(trx, {
          purpose: POOL_PURPOSES.withdraw,
          ref: user_id,
          from: wallets.proxyAddress,
          pool,
          call: { fn: 'withdraw' },
          now: clock.now(),
        });
      });
      if (!transferId) continue;
      await pool.parameters();
      const { transfer } = await outbox.process(transferId);
      if (transfer.status === TRANSFER_STATUS.mined) released++;
    } catch (error) {
      log.error(
        { err: error, user: user_id },
        'release: the pass failed for this owner; the next pass retries',
      );
    }
  }
  return released;
}
