/**
 * How slashes ride the transfer outbox (chain/transfer-outbox.ts): the staking vault signs; the
 * slash mirrors its transfer (signed, with the hash) and ends with it — sent, the stake event
 * carrying the hash, when mined; back to signing without a transfer when it can never land
 * (reverted, replaced, cancelled), so the next pass enqueues another (slash.ts).
 */
import type { ChainServices } from '../chain/create-chain-services.js';
import type { TransferHandler } from '../chain/transfer-types.js';
import type { Clock } from '../clock.js';
import { SLASH_STATUS } from '../db/tables/trust.js';
import { ApiError } from '../errors.js';

/** The outbox purpose of slashes. */
export const SLASH_PURPOSE = 'slash';
/** A slash's `raw_tx` names its open transfer as `transfer:<id>`. */
export const TRANSFER_REF_PREFIX = 'transfer:';

/** The slash use of the transfer outbox. */
export function slashTransfers(services: ChainServices, clock: Clock): TransferHandler {
  return {
    async signer() {
      const vault = services.stakingVault?.account;
      if (!vault) throw new ApiError('chain_unavailable', 'The staking vault is not configured here.');
      return vault;
    },
    async progress(trx, transfer, status) {
      if (status !== 'signed') return;
      await trx
        .updateTable('slashes')
        .set({ status: SLASH_STATUS.signed, tx_hash: transfer.tx_hash, updated_at: clock.now() })
        .where('id', '=', transfer.ref)
        .where('raw_tx', '=', `${TRANSFER_REF_PREFIX}${transfer.id}`)
        .execute();
    },
    async settle(trx, transfer, outcome) {
      const mine = `${TRANSFER_REF_PREFIX}${transfer.id}`;
      if (outcome !== 'mined') {
        await trx
          .updateTable('slashes')
          .set({ status: SLASH_STATUS.signing, tx_hash: null, raw_tx: null, updated_at: clock.now() })
          .where('id', '=', transfer.ref)
          .where('raw_tx', '=', mine)
          .execute();
        return;
      }
      const sent = await trx
        .updateTable('slashes')
        .set({ status: SLASH_STATUS.sent, tx_hash: transfer.tx_hash, raw_tx: null, updated_at: clock.now() })
        .where('id', '=', transfer.ref)
        .where('raw_tx', '=', mine)
        .returning('stake_event_id')
        .executeTakeFirst();
      if (sent?.stake_event_id) {
        await trx
          .updateTable('stake_events')
          .set({ tx_hash: transfer.tx_hash })
          .where('id', '=', sent.stake_event_id)
          .execute();
      }
    },
  };
}
