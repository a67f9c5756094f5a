import type { Store } from '../../db/store.js';
import { ENTRY_KINDS, PLATFORM_ACCOUNT_ID, providerAccountId } from '../../db/tables/ledger.js';
import { applyEntry } from '../../ledger/apply-entry.js';

/**
 * Pays a provider for a canary or a verification from the platform's fee income, in one ledger
 * transaction (two entries, the sum unchanged). Never creates credit: when the platform account
 * does not cover it, nothing moves and false is returned (the canary still counts).
 */
export async function payFromPlatform(
  store: Store,
  p: { to: string; amountNano: bigint; ref: string; now: number },
): Promise<boolean> {
  if (p.amountNano <= 0n) return true;
  return store.db.transaction().execute(async (trx) => {
    const out = await applyEntry(trx, {
      accountId: PLATFORM_ACCOUNT_ID,
      kind: ENTRY_KINDS.trustPayment,
      amount: -p.amountNano,
      ref: `${p.ref}:from`,
      now: p.now,
    });
    if (!out) return false;
    await applyEntry(trx, {
      accountId: providerAccountId(p.to),
      kind: ENTRY_KINDS.trustPayment,
      amount: p.amountNano,
      ref: `${p.ref}:to`,
      now: p.now,
    });
    return true;
  });
}
