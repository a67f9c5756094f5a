import type { Transaction } from 'kysely';
import { toBigInt } from '../db/bigint.js';
import type { Database } from '../db/schema.js';
import { RESERVATION_STATUS } from './tables.js';

/**
 * Inside a transaction: moves a held reservation to `status` and returns it, or null when it is not
 * held any more (already settled or released) — which makes settle and release idempotent.
 */
export async function takeReservation(
  trx: Transaction<Database>,
  reservationId: string,
  status: 'settled' | 'released',
  now: number,
): Promise<{ accountId: string; amount: bigint } | null> {
  const row = await trx
    .updateTable('ledger_reservations')
    .set({ status, updated_at: now })
    .where('id', '=', reservationId)
    .where('status', '=', RESERVATION_STATUS.held)
    .returning(['account_id', 'amount'])
    .executeTakeFirst();
  return row ? { accountId: row.account_id, amount: toBigInt(row.amount) } : null;
}
