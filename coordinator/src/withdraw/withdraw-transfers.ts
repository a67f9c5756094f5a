/**
 * How withdrawals ride the transfer outbox (chain/transfer-outbox.ts): the user's proxy wallet
 * signs. Right before signing, in the wallet's queue and lock (shared by every replica), the daily
 * limit and the spendable balance are checked, so they cannot race another send of the wallet nor
 * a top-up crediting it: refused (with the code; the transfer is cancelled) or sending. The
 * withdrawal ends with the transfer: sent when mined; failed, with the code, otherwise.
 */
import type { Kysely } from 'kysely';
import type { PaymentSource } from '../chain/constants.js';
import type { ChainServices } from '../chain/create-chain-services.js';
import { spendableBalance } from '../chain/spendable-balance.js';
import type { TransferHandler } from '../chain/transfer-types.js';
import { toBigInt } from '../db/bigint.js';
import type { Database } from '../db/schema.js';
import { WITHDRAWAL_STATUS } from '../db/tables/chain.js';
import { ApiError } from '../errors.js';
import type { Keyring } from '../wallets/keyring.js';
import { loadProxyAccount } from '../wallets/load-proxy-account.js';

/** The outbox purpose of withdrawals. */
export const WITHDRAW_PURPOSE = 'withdraw';
/** The window the daily withdrawal limit sums over. */
export const WITHDRAW_WINDOW_MS = 24 * 60 * 60 * 1000;
/** Refusals of the check before signing: the withdrawal is `refused`, not `failed`. */
const REFUSALS = new Set(['withdraw_limit_exceeded', 'insufficient_funds']);

/** The withdrawal use of the transfer outbox. */
export function withdrawTransfers({
  db,
  services,
  keyring,
}: {
  db: Kysely<Database>;
  services: ChainServices;
  keyring: Keyring;
}): TransferHandler {
  return {
    async signer(transfer) {
      const row = await findWithdrawal(db, transfer.ref);
      return loadProxyAccount(db, keyring, row.user_id);
    },
    async precheck(transfer, { feeWei }) {
      const row = await findWithdrawal(db, transfer.ref);
      const source = row.token as PaymentSource;
      const units = BigInt(row.amount);
      const usdNano = toBigInt(row.usd_nano);
      const recent = await db
        .selectFrom('withdrawals')
        .select('usd_nano')
        .where('user_id', '=', row.user_id)
        .where('status', 'in', [WITHDRAWAL_STATUS.sending, WITHDRAWAL_STATUS.sent])
        .where('created_at', '>', toBigInt(row.created_at) - BigInt(WITHDRAW_WINDOW_MS))
        .where('id', '!=', row.id)
        .execute();
      const used = recent.reduce((sum, r) => sum + toBigInt(r.usd_nano), 0n);
      if (used + usdNano > services.withdrawDailyLimitNano) {
        throw new ApiError('withdraw_limit_exceeded', undefined, { param: 'amount', retryAfterS: 3600 });
      }
      // The gas is paid in native token, from what backs no credit, like the amount itself.
      const proxyAddress = transfer.from_address as `0x${string}`;
      const spendable = (token: PaymentSource) =>
        spendableBalance(db, services, { userId: row.user_id, proxyAddress, token });
      const covered =
        source === 'native'
          ? (await spendable('native')) >= units + feeWei
          : (await spendable(source)) >= units && (await spendable('native')) >= feeWei;
      if (!covered) throw new ApiError('insufficient_funds', undefined, { param: 'amount' });
      await db
        .updateTable('withdrawals')
        .set({ status: WITHDRAWAL_STATUS.sending })
        .where('id', '=', row.id)
        .where('status', '=', WITHDRAWAL_STATUS.queued)
        .execute();
    },
    async progress(trx, transfer, status) {
      if (status !== 'broadcast') return;
      await trx
        .updateTable('withdrawals')
        .set({ tx_hash: transfer.tx_hash })
        .where('id', '=', transfer.ref)
        .execute();
    },
    async settle(trx, transfer, outcome) {
      const open = [WITHDRAWAL_STATUS.queued, WITHDRAWAL_STATUS.sending];
      if (outcome === 'mined') {
        await trx
          .updateTable('withdrawals')
          .set({ status: WITHDRAWAL_STATUS.sent, tx_hash: transfer.tx_hash })
          .where('id', '=', transfer.ref)
          .where('status', 'in', open)
          .execute();
        return;
      }
      const code = outcome === 'reverted' ? 'chain_tx_failed' : (transfer.error_code ?? outcome);
      await trx
        .updateTable('withdrawals')
        .set({
          status:
            outcome === 'cancelled' && REFUSALS.has(code)
              ? WITHDRAWAL_STATUS.refused
              : WITHDRAWAL_STATUS.failed,
          error_code: code,
        })
        .where('id', '=', transfer.ref)
        .where('status', 'in', open)
        .execute();
    },
  };
}

async function findWithdrawal(db: Kysely<Database>, id: string) {
  const row = await db.selectFrom('withdrawals').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw new Error(`withdrawal ${id} is gone`);
  return row;
}
