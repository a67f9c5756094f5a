import type { Kysely } from 'kysely';
import { type Clock, systemClock } from '../clock.js';
import { toBigInt } from '../db/bigint.js';
import type { Database } from '../db/schema.js';
import { ENTRY_KINDS, type EntryKind } from '../db/tables/ledger.js';
import { applyEntry } from './apply-entry.js';
import { assertPositive, LedgerInputError } from './ledger-input.js';

export type CreditParams = {
  /** The account credited: a user id (or a provider/platform account id). */
  userId: string;
  amountNano: bigint;
  /** topup (default) or adjustment. */
  kind?: Extract<EntryKind, 'topup' | 'adjustment'>;
  /** Idempotency reference (e.g. the payment id): a ref credits once per kind, ever. */
  ref: string;
  clock?: Clock;
};

export type CreditResult =
  /** This call credited the account. */
  | { credited: true; entryId: string; balanceNano: bigint }
  /** The ref was credited before (maybe to another account): nothing changed. */
  | { credited: false; entryId: string; userId: string; amountNano: bigint; balanceNano: bigint };

/**
 * Credits an account, once per (kind, ref), in one transaction. A repeat, also a concurrent one,
 * changes nothing and reports the original credit so the caller can tell "same payer, same result"
 * from "someone else's payment".
 */
export async function credit(db: Kysely<Database>, params: CreditParams): Promise<CreditResult> {
  assertPositive(params.amountNano, 'amountNano');
  if (!params.ref) throw new LedgerInputError('ref is required');
  const kind = params.kind ?? ENTRY_KINDS.topup;
  const now = (params.clock ?? systemClock).now();
  const existing = async () => {
    const row = await db
      .selectFrom('ledger_entries')
      .select(['id', 'account_id', 'amount'])
      .where('kind', '=', kind)
      .where('ref', '=', params.ref)
      .executeTakeFirst();
    if (!row) return null;
    const account = await db
      .selectFrom('ledger_accounts')
      .select('balance')
      .where('account_id', '=', row.account_id)
      .executeTakeFirst();
    return {
      credited: false as const,
      entryId: row.id,
      userId: row.account_id,
      amountNano: toBigInt(row.amount),
      balanceNano: account ? toBigInt(account.balance) : 0n,
    };
  };
  const before = await existing();
  if (before) return before;
  try {
    const applied = await db
      .transaction()
      .execute((trx) =>
        applyEntry(trx, { accountId: params.userId, kind, amount: params.amountNano, ref: params.ref, now }),
      );
    if (!applied) throw new Error('credit did not apply'); // a credit always applies; unreachable
    return { credited: true, entryId: applied.entryId, balanceNano: applied.balanceAfter };
  } catch (error) {
    // A concurrent credit with the same ref won the unique index: report it.
    const after = await existing();
    if (after) return after;
    throw error;
  }
}
