/**
 * How unbonding releases ride the transfer outbox (chain/transfer-outbox.ts): the staking vault
 * signs; the unbonding row is `releasing` exactly while its transfer is open, and ends with it —
 * released (with a `release` stake event) when mined; back to `unbonding` when the transfer can
 * never land (reverted, replaced, cancelled), so the next pass sends it again. No row stays
 * `releasing` without an open transfer.
 */
import { randomUUID } from 'node:crypto';
import type { ChainServices } from '../chain/create-chain-services.js';
import type { TransferHandler } from '../chain/transfer-types.js';
import type { Clock } from '../clock.js';
import { UNBONDING_STATUS } from '../db/tables/chain.js';
import { ApiError } from '../errors.js';

/** The outbox purpose of unbonding releases. */
export const RELEASE_PURPOSE = 'release';

/** The release use of the transfer outbox. */
export function releaseTransfers(services: ChainServices, clock: Clock): TransferHandler {
  return {
    async signer() {
      const vault = services.stakingVault?.account;
      if (!vault) throw new ApiError('chain_unavailable', 'The staking vault is not configured here.');
      return vault;
    },
    async progress(trx, transfer) {
      await trx
        .updateTable('unbondings')
        .set({ tx_hash: transfer.tx_hash })
        .where('id', '=', transfer.ref)
        .execute();
    },
    async settle(trx, transfer, outcome) {
      if (outcome !== 'mined') {
        await trx
          .updateTable('unbondings')
          .set({ status: UNBONDING_STATUS.unbonding, tx_hash: null })
          .where('id', '=', transfer.ref)
          .where('status', '=', UNBONDING_STATUS.releasing)
          .execute();
        return;
      }
      const released = await trx
        .updateTable('unbondings')
        .set({ status: UNBONDING_STATUS.released, tx_hash: transfer.tx_hash })
        .where('id', '=', transfer.ref)
        .where('status', '=', UNBONDING_STATUS.releasing)
        .returning(['user_id', 'amount_wei'])
        .executeTakeFirst();
      if (!released) return;
      await trx
        .insertInto('stake_events')
        .values({
          id: randomUUID(),
          user_id: released.user_id,
          kind: 'release',
          amount_wei: released.amount_wei,
          tx_hash: transfer.tx_hash,
          created_at: clock.now(),
        })
        .execute();
    },
  };
}
