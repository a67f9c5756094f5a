/**
 * Finishes payouts left open (a coordinator killed after debiting or broadcasting, a receipt wait
 * that timed out): the transfer outbox's sweep (chain/transfer-outbox.ts) carries each open
 * payout transfer to its end from what the chain says — the stored bytes broadcast again, never
 * signed again; mined: paid; reverted, or its nonce taken by another transaction: the earnings go
 * back (payout-transfers.ts).
 *
 * Payouts opened before the outbox existed (signed or sent, their bytes on the payout row, no
 * transfer) are adopted first: their transfer is recorded as signed with those bytes, and the sweep
 * finishes them like any other; one never signed (`pending`, no transfer) gives its earnings back.
 * Runs at start and every `settleAfterMs` on each replica; two replicas settling one payout agree,
 * since each step is a guarded status change.
 */
import { randomUUID } from 'node:crypto';
import { encodeFunctionData, erc20Abi, getAddress } from 'viem';
import { NATIVE_TRANSFER_GAS, type PaymentSource, STABLE_TRANSFER_GAS } from '../chain/constants.js';
import type { ChainServices } from '../chain/create-chain-services.js';
import { TransferOutbox } from '../chain/transfer-outbox.js';
import type { OutboxLog } from '../chain/transfer-types.js';
import { systemClock } from '../clock.js';
import { toBigInt } from '../db/bigint.js';
import type { Store } from '../db/store.js';
import { TRANSFER_STATUS } from '../db/tables/chain.js';
import { PAYOUT_STATUS, UNSETTLED } from '../db/tables/provider.js';
import { failPayout, PAYOUT_PURPOSE, payoutTransfers } from './payout-transfers.js';

export type SettleReport = { adopted: number; refunded: number; looked: number; finished: number };

/** Where the settlement logs when no outbox is passed in: errors to stderr, nothing else. */
const STDERR_LOG: OutboxLog = {
  warn: () => {},
  error: (object, message) => console.error(message, object),
};

export async function settlePayouts(
  { store, services, outbox }: { store: Store; services: ChainServices; outbox?: TransferOutbox },
  { now, settleAfterMs }: { now: number; settleAfterMs: number },
): Promise<SettleReport> {
  const report: SettleReport = { adopted: 0, refunded: 0, looked: 0, finished: 0 };
  const treasury = services.treasury;
  const legacy = !treasury
    ? []
    : await store.db
        .selectFrom('provider_payouts as p')
        .selectAll('p')
        .where('p.status', 'in', UNSETTLED)
        .where('p.updated_at', '<=', now - settleAfterMs)
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom('chain_transfers as t')
                .select('t.id')
                .where('t.purpose', '=', PAYOUT_PURPOSE)
                .whereRef('t.ref', '=', 'p.id'),
            ),
          ),
        )
        .orderBy('p.created_at')
        .limit(100)
        .execute();
  for (const p of legacy) {
    if (p.status === PAYOUT_STATUS.pending || !p.raw_tx || !p.tx_hash) {
      // Never signed: nothing can have left the process.
      if (
        p.status === PAYOUT_STATUS.pending &&
        (await store.db.transaction().execute((trx) => failPayout(trx, p.id, 'payout_not_sent', now)))
      ) {
        report.refunded++;
      }
      continue;
    }
    const token = p.token as PaymentSource;
    const tokenAddress = token === 'native' ? undefined : services.tokens[token]!;
    const units = BigInt(p.amount);
    await store.db
      .insertInto('chain_transfers')
      .values({
        id: randomUUID(),
        purpose: PAYOUT_PURPOSE,
        ref: p.id,
        from_address: treasury!.address,
        to_address: tokenAddress ?? getAddress(p.to_address),
        value_wei: tokenAddress ? '0' : units.toString(),
        data: tokenAddress
          ? encodeFunctionData({
              abi: erc20Abi,
              functionName: 'transfer',
              args: [getAddress(p.to_address), units],
            })
          : null,
        gas: (tokenAddress ? STABLE_TRANSFER_GAS : NATIVE_TRANSFER_GAS).toString(),
        asset: tokenAddress ?? 'native',
        amount: units.toString(),
        status: TRANSFER_STATUS.signed,
        nonce: null,
        tx_hash: p.tx_hash,
        raw_tx: p.raw_tx,
        claimed_by: null,
        claimed_at: null,
        error_code: null,
        created_at: toBigInt(p.created_at),
        updated_at: toBigInt(p.updated_at),
      })
      .execute();
    report.adopted++;
  }
  const sweeper =
    outbox ??
    new TransferOutbox({
      db: store.db,
      context: services.context,
      clock: systemClock,
      log: STDERR_LOG,
    }).register(PAYOUT_PURPOSE, payoutTransfers(services, systemClock));
  const swept = await sweeper.sweep({ olderThanMs: settleAfterMs });
  report.looked = swept.looked;
  report.finished = swept.finished;
  return report;
}
