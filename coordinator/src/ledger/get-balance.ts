import { toBigInt } from '../db/bigint.js';
import { ledgerIdle } from './batch.js';
import type { LedgerDb } from './db.js';

export type Balance = {
  /** Spendable now, nanousd. */
  balanceNano: bigint;
  /** Total charged for inference so far. */
  spendNano: bigint;
  /** Held for requests in flight. */
  reservedNano: bigint;
};

/**
 * An account's balance; zeros for an account that never held credits. Sees every ledger operation
 * this process queued before the call.
 */
export async function getBalance(db: LedgerDb, userId: string): Promise<Balance> {
  await ledgerIdle(db);
  const row = await db
    .selectFrom('ledger_accounts')
    .select(['balance', 'spend', 'reserved'])
    .where('account_id', '=', userId)
    .executeTakeFirst();
  if (!row) return { balanceNano: 0n, spendNano: 0n, reservedNano: 0n };
  return {
    balanceNano: toBigInt(row.balance),
    spendNano: toBigInt(row.spend),
    reservedNano: toBigInt(row.reserved),
  };
}
