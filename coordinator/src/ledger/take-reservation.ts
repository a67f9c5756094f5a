import { toBigInt } from '../db/bigint.js';
import { Statement } from '../db/statement.js';
import { RESERVATION_STATUS } from '../db/tables/ledger.js';
import type { Tx } from '../db/tx.js';

const take = new Statement<{ account_id: string; amount: string | number | bigint }>(
  `update ledger_reservations set status = ?, updated_at = ?
   where id = ? and status = '${RESERVATION_STATUS.held}'
   returning account_id, amount`,
);

/**
 * Inside a transaction: moves a held reservation to `status` and returns it, or null when it is not
 * held any more (already settled or released) — which makes settle and release idempotent.
 */
export async function takeReservation(
  tx: Tx,
  reservationId: string,
  status: 'settled' | 'released',
  now: number,
): Promise<{ accountId: string; amount: bigint } | null> {
  const row = await take.first(tx, [status, now, reservationId]);
  return row ? { accountId: row.account_id, amount: toBigInt(row.amount) } : null;
}
