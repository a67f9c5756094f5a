/**
 * How payouts ride the transfer outbox (chain/transfer-outbox.ts): the treasury signs; right
 * before signing, in its queue, the treasury must cover the payout on top of what is already in
 * flight; the payout row mirrors the transfer (signed, sent) and ends with it — paid when mined,
 * failed with its earnings given back when reverted, replaced or cancelled.
 */
import type { Kysely } from 'kysely';
import { type Address, erc20Abi } from 'viem';
import {
  GAS_PRICE_WEI,
  NATIVE_TRANSFER_GAS,
  type PaymentSource,
  STABLE_TRANSFER_GAS,
} from '../chain/constants.js';
import type { ChainServices } from '../chain/create-chain-services.js';
import { inFlightAmount } from '../chain/in-flight-amount.js';
import type { TransferHandler } from '../chain/transfer-types.js';
import type { Clock } from '../clock.js';
import { toBigInt } from '../db/bigint.js';
import type { Database } from '../db/schema.js';
import { PAYOUT_STATUS, UNSETTLED } from '../db/tables/provider.js';
import { ApiError } from '../errors.js';
import { refundEarnings } from '../ledger/payout-entries.js';

/** The outbox purpose of payouts. */
export const PAYOUT_PURPOSE = 'payout';

/** The payout use of the transfer outbox. */
export function payoutTransfers(services: ChainServices, clock: Clock): TransferHandler {
  return {
    async signer() {
      const treasury = services.treasury?.account;
      if (!treasury)
        throw new ApiError('treasury_unavailable', 'No treasury is configured on this coordinator.');
      return treasury;
    },
    async precheck(transfer, { db }) {
      // A payout failed while it waited in the queue (an operator, a settlement) is not sent.
      const payout = await db
        .selectFrom('provider_payouts')
        .select(['status', 'token', 'amount'])
        .where('id', '=', transfer.ref)
        .executeTakeFirst();
      if (payout?.status !== PAYOUT_STATUS.pending) {
        throw new ApiError('treasury_unavailable', 'The payout was cancelled while it waited; try again.');
      }
      await assertTreasuryCovers(db, services, {
        token: payout.token as PaymentSource,
        units: BigInt(payout.amount),
        except: transfer.id,
      });
    },
    async progress(trx, transfer, status) {
      await trx
        .updateTable('provider_payouts')
        .set({
          status: status === 'signed' ? PAYOUT_STATUS.signed : PAYOUT_STATUS.sent,
          tx_hash: transfer.tx_hash,
          updated_at: clock.now(),
        })
        .where('id', '=', transfer.ref)
        .where('status', 'in', UNSETTLED)
        .execute();
    },
    async settle(trx, transfer, outcome) {
      const now = clock.now();
      if (outcome === 'mined') {
        await trx
          .updateTable('provider_payouts')
          .set({ status: PAYOUT_STATUS.paid, tx_hash: transfer.tx_hash, raw_tx: null, updated_at: now })
          .where('id', '=', transfer.ref)
          .where('status', 'in', UNSETTLED)
          .execute();
        return;
      }
      const code =
        outcome === 'reverted'
          ? 'chain_tx_failed'
          : outcome === 'replaced'
            ? 'payout_not_mined'
            : (transfer.error_code ?? 'payout_not_sent');
      await failPayout(trx, transfer.ref, code, now);
    },
  };
}

/**
 * Gives a payout's earnings back, once: the row moves from an open status to failed and the
 * refund entry is written in the same transaction. False when it was no longer open.
 */
export async function failPayout(
  trx: Kysely<Database>,
  id: string,
  errorCode: string,
  now: number,
): Promise<boolean> {
  const result = await trx
    .updateTable('provider_payouts')
    .set({ status: PAYOUT_STATUS.failed, error_code: errorCode, raw_tx: null, updated_at: now })
    .where('id', '=', id)
    .where('status', 'in', UNSETTLED)
    .returning(['owner', 'usd_nano'])
    .executeTakeFirst();
  if (!result) return false;
  await refundEarnings(trx, { owner: result.owner, usdNano: toBigInt(result.usd_nano), payoutId: id, now });
  return true;
}

/**
 * The treasury covers `units` of `token` (and the gas, in native token) on top of every transfer
 * it signed or broadcast that is not settled yet — what its balance on chain does not show.
 * treasury_unavailable otherwise; chain_unavailable when the chain does not answer.
 */
export async function assertTreasuryCovers(
  db: Kysely<Database>,
  services: ChainServices,
  { token, units, except }: { token: PaymentSource; units: bigint; except?: string },
): Promise<void> {
  const treasury = services.treasury?.address as Address;
  const { client } = services.context;
  const tokenAddress = token === 'native' ? undefined : services.tokens[token]!;
  const gas = (token === 'native' ? NATIVE_TRANSFER_GAS : STABLE_TRANSFER_GAS) * GAS_PRICE_WEI;
  let native: bigint;
  let held: bigint;
  try {
    native = await client.getBalance({ address: treasury });
    held = tokenAddress
      ? await client.readContract({
          address: tokenAddress,
          abi: erc20Abi,
          functionName: 'balanceOf',
          args: [treasury],
        })
      : native;
  } catch {
    throw new ApiError('chain_unavailable');
  }
  const nativeOut = await inFlightAmount(db, {
    from: treasury,
    asset: 'native',
    ...(except ? { except } : {}),
  });
  const covered = tokenAddress
    ? held -
        (await inFlightAmount(db, { from: treasury, asset: tokenAddress, ...(except ? { except } : {}) })) >=
        units && native - nativeOut >= gas
    : native - nativeOut >= units + gas;
  if (!covered) throw new ApiError('treasury_unavailable', undefined, { param: 'token' });
}
