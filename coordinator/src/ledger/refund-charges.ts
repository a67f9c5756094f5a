import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { ENTRY_KINDS, type EntryKind } from '../db/tables/ledger.js';
import type { Tx } from '../db/tx.js';
import { appendEntries, type EntryParams, moveBalance } from './apply-entry.js';

/** One charge to give back: `amountNano` to `accountId`, once per `ref` (its entries: `<ref>:from|to`). */
export type Refund = { ref: string; accountId: string; amountNano: bigint };

/** Money moved into the pool before it pays: `amountNano` from `from` (entries `<ref>:from|to`, of `kind`). */
export type Funding = { from: string; amountNano: bigint; kind: EntryKind; ref: string };

/** Entries one INSERT carries (7 parameters each: well under both dialects' limits). */
const ENTRIES_PER_INSERT = 200;

/** Thrown when an account no longer covers what the caller planned to take from it. */
export class RefundNotCovered extends Error {
  constructor(readonly accountId: string) {
    super(`${accountId} does not cover its part of the refunds`);
    this.name = 'RefundNotCovered';
  }
}

/**
 * Inside a transaction: moves each funding into `pool`, then pays each refund out of it. Every move
 * is two entries summing to zero (`<ref>:from` on the payer, `<ref>:to` on the payee), so
 * Σ entries = Σ balances holds; refunds are `conviction_refund` entries, unique per ref, so a charge
 * is given back once, ever. Never creates credit: the debits are guarded, and when one is not
 * covered it throws `RefundNotCovered` — the caller's transaction must then roll back (the
 * clients' credits were already written).
 *
 * Clients are credited first, sorted by account: a settlement locks its client's row before the
 * provider's and the platform's, so taking the rows in that order keeps clear of lock cycles with
 * settlements on PostgreSQL (but for a group commit holding two of these clients in the other
 * order: PostgreSQL then aborts one of the two transactions). One UPDATE per account whatever the number of jobs (a conviction may refund thousands,
 * and on SQLite every writer waits for it); each entry's `balance_after` is the running balance.
 */
export async function refundChargesIn(
  trx: Kysely<Database> | Tx,
  p: { pool: string; fundings: readonly Funding[]; refunds: readonly Refund[]; now: number },
): Promise<void> {
  const { pool, now } = p;
  const kind = ENTRY_KINDS.convictionRefund;
  const refunds = p.refunds.filter((r) => r.amountNano > 0n);
  const fundings = p.fundings.filter((f) => f.amountNano > 0n);
  const entries: (EntryParams & { balanceAfter: bigint })[] = [];

  const perClient = new Map<string, bigint>();
  for (const r of refunds) perClient.set(r.accountId, (perClient.get(r.accountId) ?? 0n) + r.amountNano);
  /** Each client's balance before its refunds. */
  const client = new Map<string, bigint>();
  for (const accountId of [...perClient.keys()].sort()) {
    const sum = perClient.get(accountId)!;
    const after = await moveBalance(trx, { accountId, kind, amount: sum, ref: null, now });
    if (after === null) throw new Error('a refund credit did not apply'); // a credit always applies
    client.set(accountId, after - sum);
  }

  for (const f of fundings) {
    const from = await moveBalance(trx, {
      accountId: f.from,
      kind: f.kind,
      amount: -f.amountNano,
      ref: null,
      now,
    });
    if (from === null) throw new RefundNotCovered(f.from);
    const to = await moveBalance(trx, {
      accountId: pool,
      kind: f.kind,
      amount: f.amountNano,
      ref: null,
      now,
    });
    entries.push(
      {
        accountId: f.from,
        kind: f.kind,
        amount: -f.amountNano,
        balanceAfter: from,
        ref: `${f.ref}:from`,
        now,
      },
      { accountId: pool, kind: f.kind, amount: f.amountNano, balanceAfter: to!, ref: `${f.ref}:to`, now },
    );
  }

  if (refunds.length > 0) {
    const total = refunds.reduce((sum, r) => sum + r.amountNano, 0n);
    const poolAfter = await moveBalance(trx, { accountId: pool, kind, amount: -total, ref: null, now });
    if (poolAfter === null) throw new RefundNotCovered(pool);
    let poolBalance = poolAfter + total;
    for (const r of refunds) {
      poolBalance -= r.amountNano;
      const balance = client.get(r.accountId)! + r.amountNano;
      client.set(r.accountId, balance);
      entries.push(
        {
          accountId: pool,
          kind,
          amount: -r.amountNano,
          balanceAfter: poolBalance,
          ref: `${r.ref}:from`,
          now,
        },
        {
          accountId: r.accountId,
          kind,
          amount: r.amountNano,
          balanceAfter: balance,
          ref: `${r.ref}:to`,
          now,
        },
      );
    }
  }
  for (let i = 0; i < entries.length; i += ENTRIES_PER_INSERT) {
    await appendEntries(trx, entries.slice(i, i + ENTRIES_PER_INSERT));
  }
}
