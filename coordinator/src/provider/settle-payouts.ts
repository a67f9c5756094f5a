/**
 * Finishes payouts left open (a coordinator killed after debiting or broadcasting, a receipt wait
 * that timed out) from what the chain says, inside the treasury's signer queue so no new payout
 * takes a nonce meanwhile:
 * - never signed (`pending`): nothing can have left the process; the earnings go back;
 * - signed or sent, with a receipt: paid (or reverted: the earnings go back);
 * - signed or sent, known to the chain but not mined: left open, looked at again later;
 * - unknown to the chain: the stored bytes are broadcast again — the same transaction, so it can
 *   be mined once at most; if the chain refuses them (their nonce went to another transaction)
 *   and there is still no receipt, they never will be mined, and the earnings go back.
 * Runs at start and every `settleAfterMs` on each replica; two replicas settling one payout agree,
 * since each step is a guarded status change.
 */
import { type Hex, TransactionNotFoundError, TransactionReceiptNotFoundError } from 'viem';
import type { ChainServices } from '../chain/create-chain-services.js';
import { toBigInt } from '../db/bigint.js';
import type { Store } from '../db/store.js';
import { findById, refundPayout, setStatus } from './payout.js';
import { PAYOUT_STATUS, UNSETTLED } from './tables.js';

export type SettleReport = { paid: number; refunded: number; open: number };

export async function settlePayouts(
  { store, services }: { store: Store; services: ChainServices },
  { now, settleAfterMs }: { now: number; settleAfterMs: number },
): Promise<SettleReport> {
  const report: SettleReport = { paid: 0, refunded: 0, open: 0 };
  const treasury = services.treasury;
  if (!treasury) return report;
  const rows = await store.db
    .selectFrom('provider_payouts')
    .select(['id', 'updated_at'])
    .where('status', 'in', UNSETTLED)
    .where('updated_at', '<=', now - settleAfterMs)
    .orderBy('created_at')
    .limit(100)
    .execute();
  for (const { id } of rows) {
    const outcome = await services.context.queue.run(treasury.address, () =>
      settleOne(store, services, id, now),
    );
    report[outcome] += 1;
  }
  return report;
}

async function settleOne(
  store: Store,
  services: ChainServices,
  id: string,
  now: number,
): Promise<keyof SettleReport> {
  const row = await findById(store, id);
  if (!row || !(UNSETTLED as readonly string[]).includes(row.status)) return 'open';
  if (row.status === PAYOUT_STATUS.pending || !row.tx_hash) {
    return (await refundPayout(store, id, 'payout_not_sent', now)) ? 'refunded' : 'open';
  }
  const { client } = services.context;
  const hash = row.tx_hash as Hex;
  const receipt = await receiptOf(services, hash);
  if (receipt === 'success') {
    await setStatus(store, id, PAYOUT_STATUS.paid, now, { raw_tx: null });
    return 'paid';
  }
  if (receipt === 'reverted') {
    return (await refundPayout(store, id, 'chain_tx_failed', now)) ? 'refunded' : 'open';
  }
  try {
    await client.getTransaction({ hash });
    await setStatus(store, id, PAYOUT_STATUS.sent, now); // waiting in the pool
    return 'open';
  } catch (error) {
    if (!(error instanceof TransactionNotFoundError)) throw error;
  }
  if (!row.raw_tx) return 'open';
  try {
    await client.sendRawTransaction({ serializedTransaction: row.raw_tx as Hex });
    await setStatus(store, id, PAYOUT_STATUS.sent, now);
    return 'open';
  } catch (error) {
    // Refused: mined meanwhile (then there is a receipt now), or its nonce is taken for good.
    const again = await receiptOf(services, hash);
    if (again === 'success') {
      await setStatus(store, id, PAYOUT_STATUS.paid, now, { raw_tx: null });
      return 'paid';
    }
    if (again === 'none' && /nonce/i.test(String((error as Error).message))) {
      return (await refundPayout(store, id, 'payout_not_mined', now)) ? 'refunded' : 'open';
    }
    if (again === 'reverted') {
      return (await refundPayout(store, id, 'chain_tx_failed', now)) ? 'refunded' : 'open';
    }
    return 'open';
  }
}

async function receiptOf(services: ChainServices, hash: Hex): Promise<'success' | 'reverted' | 'none'> {
  try {
    const receipt = await services.context.client.getTransactionReceipt({ hash });
    return receipt.status === 'success' ? 'success' : 'reverted';
  } catch (error) {
    if (error instanceof TransactionReceiptNotFoundError) return 'none';
    throw error;
  }
}

/** Payouts the settlement has not finished, for the reconciliation check. */
export async function unsettledPayouts(store: Pick<Store, 'db'>, olderThan: number) {
  const rows = await store.db
    .selectFrom('provider_payouts')
    .select(['id', 'owner', 'status', 'usd_nano', 'tx_hash', 'updated_at'])
    .where('status', 'in', UNSETTLED)
    .where('updated_at', '<=', olderThan)
    .execute();
  return rows.map((r) => ({ ...r, usd_nano: toBigInt(r.usd_nano) }));
}
