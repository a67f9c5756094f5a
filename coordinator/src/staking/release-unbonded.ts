import { NATIVE_TRANSFER_GAS } from '../chain/constants.js';
import { enqueueTransfer } from '../chain/enqueue-transfer.js';
import type { TransferOutbox } from '../chain/transfer-outbox.js';
import type { OutboxLog } from '../chain/transfer-types.js';
import { OPEN_TRANSFER, UNBONDING_STATUS } from '../db/tables/chain.js';
import { getWallets } from '../wallets/get-wallets.js';
import { RELEASE_PURPOSE } from './release-transfers.js';
import type { StakingDeps } from './stake.js';

/** Most unbondings one pass releases (the next pass takes the rest). */
export const RELEASE_BATCH_SIZE = 50;

export type ReleaseDeps = Omit<StakingDeps, 'keyring'> & {
  /** The outbox, with releaseTransfers registered for 'release'. */
  outbox: TransferOutbox;
  log: OutboxLog;
};

/**
 * Returns every unbonding whose period has passed (of one user, or of everyone) from the staking
 * vault to the owner's proxy wallet, through the transfer outbox: in one transaction the row moves
 * unbonding → releasing and its transfer is enqueued (so two replicas never pay it twice), then the
 * outbox sends it; how the transfer ends moves the row on (release-transfers.ts). A row left
 * `releasing` by a crash has its transfer open, and the outbox's sweep finishes it. Errors are
 * logged and the pass goes on with the next row. Returns how many were released.
 */
export async function releaseUnbonded(
  { db, services, clock, outbox, log }: ReleaseDeps,
  { userId }: { userId?: string } = {},
): Promise<number> {
  const vault = services.stakingVault?.account;
  if (!vault) return 0;
  let query = db
    .selectFrom('unbondings')
    .selectAll()
    .where('status', '=', UNBONDING_STATUS.unbonding)
    .where('release_at', '<=', clock.now())
    .orderBy('release_at')
    .limit(RELEASE_BATCH_SIZE);
  if (userId) query = query.where('user_id', '=', userId);
  const due = await query.execute();
  let released = 0;
  for (const row of due) {
    try {
      const wallets = await getWallets(db, row.user_id);
      if (!wallets) {
        log.error(
          { unbonding: row.id, user: row.user_id },
          'release: the user has no proxy wallet; left unbonding',
        );
        continue;
      }
      const transferId = await db.transaction().execute(async (trx) => {
        const claimed = await trx
          .updateTable('unbondings')
          .set({ status: UNBONDING_STATUS.releasing })
          .where('id', '=', row.id)
          .where('status', '=', UNBONDING_STATUS.unbonding)
          .executeTakeFirst();
        if (claimed.numUpdatedRows !== 1n) return undefined;
        const amount = BigInt(row.amount_wei);
        return enqueueTransfer(trx, {
          purpose: RELEASE_PURPOSE,
          ref: row.id,
          from: vault.address,
          to: wallets.proxyAddress,
          valueWei: amount,
          gas: NATIVE_TRANSFER_GAS,
          asset: 'native',
          amount,
          now: clock.now(),
        });
      });
      if (!transferId) continue;
      const { transfer } = await outbox.process(transferId);
      if (transfer.status === 'mined') released++;
    } catch (error) {
      log.error(
        { err: error, unbonding: row.id },
        'release: the pass failed on this unbonding; the next pass retries',
      );
    }
  }
  return released;
}

/**
 * Rows an earlier version left `releasing` with no transfer in the outbox. One never broadcast (no
 * hash) goes back to `unbonding`, for the next pass. One broadcast is adopted by the outbox as a
 * `broadcast` transfer with that hash (its bytes were never stored, so it is never sent again, and
 * never signed again): mined, it is released; otherwise the sweep logs it each pass, for an operator.
 */
export async function recoverStrandedReleases({
  db,
  services,
  clock,
  log,
}: Omit<ReleaseDeps, 'outbox'>): Promise<number> {
  const vault = services.stakingVault;
  if (!vault) return 0;
  const stranded = await db
    .selectFrom('unbondings as u')
    .select(['u.id', 'u.user_id', 'u.amount_wei', 'u.tx_hash'])
    .where('u.status', '=', UNBONDING_STATUS.releasing)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('chain_transfers as t')
            .select('t.id')
            .where('t.purpose', '=', RELEASE_PURPOSE)
            .whereRef('t.ref', '=', 'u.id')
            .where('t.status', 'in', OPEN_TRANSFER),
        ),
      ),
    )
    .execute();
  let recovered = 0;
  for (const row of stranded) {
    const wallets = await getWallets(db, row.user_id);
    if (!row.tx_hash || !wallets) {
      const result = await db
        .updateTable('unbondings')
        .set({ status: UNBONDING_STATUS.unbonding })
        .where('id', '=', row.id)
        .where('status', '=', UNBONDING_STATUS.releasing)
        .executeTakeFirst();
      if (result.numUpdatedRows === 1n) recovered++;
      continue;
    }
    log.warn(
      { unbonding: row.id, hash: row.tx_hash },
      'release: adopting a broadcast release into the outbox',
    );
    const now = clock.now();
    const id = await enqueueTransfer(db, {
      purpose: RELEASE_PURPOSE,
      ref: row.id,
      from: vault.address,
      to: wallets.proxyAddress,
      valueWei: BigInt(row.amount_wei),
      gas: NATIVE_TRANSFER_GAS,
      asset: 'native',
      amount: BigInt(row.amount_wei),
      now,
    });
    await db
      .updateTable('chain_transfers')
      .set({ status: 'broadcast', tx_hash: row.tx_hash })
      .where('id', '=', id)
      .execute();
    recovered++;
  }
  return recovered;
}
