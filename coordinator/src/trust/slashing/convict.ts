/**
 * Conviction reaches the money (issue 29): when a verification verdict suspends a node, the
 * clients it served in the evidence window get back what they paid, from money the node (and the
 * platform) took for that work, and the node's other unpaid earnings are frozen. Runs inside the
 * transaction that writes the suspension, so a node is never suspended without its money following,
 * nor the other way round.
 *
 * Funding, in order (each capped by what its account holds; nothing is ever created):
 * 1. the node's unpaid earnings, forfeited into the refund pool (`earnings_forfeit`): its own
 *    provider account (`provider:<nodeId>`, the node's alone) whole, and from its owner's account
 *    (`provider:<owner>`, shared by the owner's nodes) at most what this node earned there that
 *    cannot have left yet — its billed earnings after the owner's last payout and after its own
 *    last conviction. Earnings before that count as paid out: the rest of the owner's balance is
 *    taken to be their other nodes';
 * 2. the platform fee on the window's jobs (`fee_return`), only as far as the forfeit falls short
 *    of the refunds paid;
 * 3. the refund pool's earlier balance (forfeits of earlier convictions left over after their own
 *    refunds).
 * The pool then refunds each job whole (`conviction_refund`, ref: the usage row id, so a job is
 * refunded once, ever), oldest first; a job the pool cannot cover is left unrefunded and counted in
 * the audit row. Whatever the forfeit brought beyond the refunds stays in the pool: frozen.
 */
import { sql, type Transaction } from 'kysely';
import { toBigInt } from '../../db/bigint.js';
import { lockInTransaction } from '../../db/lock-in-transaction.js';
import type { Database } from '../../db/schema.js';
import {
  ENTRY_KINDS,
  PLATFORM_ACCOUNT_ID,
  providerAccountId,
  REFUND_POOL_ACCOUNT_ID,
} from '../../db/tables/ledger.js';
import { OPEN_OR_PAID } from '../../db/tables/provider.js';
import { TRUST_ACTION } from '../../db/tables/trust.js';
import { type Funding, type Refund, refundChargesIn } from '../../ledger/refund-charges.js';

export type ConvictParams = {
  nodeId: string;
  /** The owner the node's earnings were credited to; absent: its node_owners row, if any. */
  owner?: string | undefined;
  /** Start of the evidence window (ms): the node's jobs billed from then on are refunded. */
  sinceMs: number;
  now: number;
  /** Why (the verdict's evidence); stored in the audit row. */
  reason: string;
  /** What decided it (the deciding verification's id): one conviction per ref, ever. */
  ref: string;
};

/** What a conviction moved (nanousd). */
export type Conviction = {
  /** False when `ref` was convicted before: nothing moved now, and these are that conviction's figures. */
  applied: boolean;
  owner: string | null;
  sinceMs: number;
  /** Billed jobs in the window not refunded before, and how many of them were refunded now. */
  jobs: number;
  refundedJobs: number;
  refundedNano: bigint;
  /** What the jobs left unrefunded had cost (the pool could not cover them). */
  unrefundedNano: bigint;
  /** From the node's earnings into the pool. */
  forfeitedNano: bigint;
  /** From the platform's fee income into the pool. */
  feeReturnedNano: bigint;
  /** From the pool's earlier balance into refunds. */
  fromPoolNano: bigint;
  /** What this conviction left in the pool (forfeit and fee beyond its refunds). */
  frozenNano: bigint;
};

/** A conviction's `trust_audit` id is this and its ref (the deciding verification's id). */
export const CONVICTION_ID_PREFIX = 'convict:';

/** The actor of a conviction in the audit log: the coordinator, on a verification verdict. */
export const CONVICTION_ACTOR = 'coordinator';

/**
 * Inside `trx` (the transaction that suspends the node): refunds the node's clients for the window,
 * forfeits its unpaid earnings into the refund pool and writes the `trust_audit` row. Idempotent by
 * `ref`; convictions run one at a time (a lock across replicas), so concurrent ones never fund the
 * same refund twice. Throws when the database does, or `RefundNotCovered` when the platform account
 * shrank under its share meanwhile; the caller's transaction then rolls back whole.
 */
export async function convict(trx: Transaction<Database>, p: ConvictParams): Promise<Conviction> {
  const nodeId = p.nodeId.toLowerCase();
  const auditId = `${CONVICTION_ID_PREFIX}${p.ref}`;
  // One conviction at a time (it reads the pool, then spends it), none while the node is being
  // linked (provider/link-node.ts), and no payout of its owner meanwhile (provider/payout.ts): the
  // accounts read here only grow until they are debited below. The platform's can shrink (a canary
  // paid): should it fall under the fee return in between, refundChargesIn throws and the
  // transaction rolls back whole, to be decided again at the node's next failed verification.
  await lockInTransaction(trx, 'refund_pool');
  await lockInTransaction(trx, `node:${nodeId}`);
  // The claim is the first write, so on SQLite the transaction holds the database from here on.
  const claimed = await trx
    .insertInto('trust_audit')
    .values({
      id: auditId,
      node_id: nodeId,
      action: TRUST_ACTION.convict,
      actor: CONVICTION_ACTOR,
      reason: p.reason,
      details: '{}',
      created_at: p.now,
    })
    .onConflict((oc) => oc.column('id').doNothing())
    .executeTakeFirst();
  if ((claimed.numInsertedOrUpdatedRows ?? 0n) === 0n) return replay(trx, auditId);

  const linked = p.owner
    ? undefined
    : await trx.selectFrom('node_owners').select('owner').where('node_id', '=', nodeId).executeTakeFirst();
  const owner = p.owner?.toLowerCase() || linked?.owner || null;
  if (owner) await lockInTransaction(trx, `earnings:${providerAccountId(owner)}`);

  // The window's billed jobs not refunded before (by an earlier conviction of this node).
  const jobs = (
    await trx
      .selectFrom('usage_records as u')
      .select(['u.id', 'u.user_id', 'u.cost_nano', 'u.fee_nano'])
      .where(sql<boolean>`lower(u.node_id) = ${nodeId}`)
      .where('u.created_at', '>=', p.sinceMs)
      .where('u.cost_nano', '>', 0)
      .where(
        sql<boolean>`not exists (select 1 from ledger_entries e where e.kind = ${ENTRY_KINDS.convictionRefund} and e.ref = u.id || ':to')`,
      )
      .orderBy('u.created_at')
      .orderBy('u.id')
      .execute()
  ).map((j) => ({
    id: j.id,
    userId: j.user_id,
    costNano: toBigInt(j.cost_nano),
    feeNano: toBigInt(j.fee_nano),
  }));
  const owedNano = sum(jobs.map((j) => j.costNano));
  const feesNano = sum(jobs.map((j) => j.feeNano));

  // 1. The node's unpaid earnings.
  const fundings: Funding[] = [];
  const nodeAccount = providerAccountId(nodeId);
  const fromNode = await balanceOf(trx, nodeAccount);
  fundings.push({
    from: nodeAccount,
    amountNano: fromNode,
    kind: ENTRY_KINDS.earningsForfeit,
    ref: `${p.ref}:node`,
  });
  let forfeitedNano = fromNode;
  if (owner && providerAccountId(owner) !== nodeAccount) {
    const ownerAccount = providerAccountId(owner);
    const unpaid = await unpaidEarningsOf(trx, { nodeId, owner, auditId });
    const fromOwner = min(await balanceOf(trx, ownerAccount), max(0n, unpaid - fromNode));
    fundings.push({
      from: ownerAccount,
      amountNano: fromOwner,
      kind: ENTRY_KINDS.earningsForfeit,
      ref: `${p.ref}:owner`,
    });
    forfeitedNano += fromOwner;
  }
  // 2. The platform fee on those jobs, as far as the forfeit falls short; 3. the pool's balance.
  const feeCap = min(await balanceOf(trx, PLATFORM_ACCOUNT_ID), feesNano, max(0n, owedNano - forfeitedNano));
  // Whole jobs, oldest first, while the money covers them.
  let available = (await balanceOf(trx, REFUND_POOL_ACCOUNT_ID)) + forfeitedNano + feeCap;
  const refunds: Refund[] = [];
  for (const job of jobs) {
    if (job.costNano > available) continue;
    available -= job.costNano;
    refunds.push({ ref: job.id, accountId: job.userId, amountNano: job.costNano });
  }
  const refundedNano = sum(refunds.map((r) => r.amountNano));
  // The platform gives back only what the refunds use (before the pool's earlier balance).
  const feeReturnedNano = min(feeCap, max(0n, refundedNano - forfeitedNano));
  fundings.push({
    from: PLATFORM_ACCOUNT_ID,
    amountNano: feeReturnedNano,
    kind: ENTRY_KINDS.feeReturn,
    ref: `${p.ref}:fee`,
  });
  await refundChargesIn(trx, { pool: REFUND_POOL_ACCOUNT_ID, fundings, refunds, now: p.now });

  const brought = forfeitedNano + feeReturnedNano;
  const conviction: Conviction = {
    applied: true,
    owner,
    sinceMs: p.sinceMs,
    jobs: jobs.length,
    refundedJobs: refunds.length,
    refundedNano,
    unrefundedNano: owedNano - refundedNano,
    forfeitedNano,
    feeReturnedNano,
    fromPoolNano: max(0n, refundedNano - brought),
    frozenNano: max(0n, brought - refundedNano),
  };
  await trx
    .updateTable('trust_audit')
    .set({ details: JSON.stringify(conviction, (_key, v) => (typeof v === 'bigint' ? `${v}` : v)) })
    .where('id', '=', auditId)
    .execute();
  return conviction;
}

/**
 * What this node earned in its owner's account that cannot have left it yet: its billed earnings
 * after the owner's last payout (open or paid) and after the node's own last conviction (which took
 * what was there then).
 */
async function unpaidEarningsOf(
  trx: Transaction<Database>,
  q: { nodeId: string; owner: string; auditId: string },
): Promise<bigint> {
  const payout = await trx
    .selectFrom('provider_payouts')
    .select(sql<string | number | bigint | null>`max(created_at)`.as('at'))
    .where('owner', '=', q.owner)
    .where('status', 'in', OPEN_OR_PAID)
    .executeTakeFirst();
  const convicted = await trx
    .selectFrom('trust_audit')
    .select(sql<string | number | bigint | null>`max(created_at)`.as('at'))
    .where('node_id', '=', q.nodeId)
    .where('action', '=', TRUST_ACTION.convict)
    .where('id', '!=', q.auditId)
    .executeTakeFirst();
  const after = max(
    payout?.at == null ? -1n : toBigInt(payout.at),
    convicted?.at == null ? -1n : toBigInt(convicted.at),
  );
  const row = await trx
    .selectFrom('usage_records as u')
    .select(sql<string | number | bigint>`coalesce(sum(u.provider_nano), 0)`.as('earned'))
    .where(sql<boolean>`lower(u.node_id) = ${q.nodeId}`)
    .where('u.created_at', '>', Number(after))
    .executeTakeFirstOrThrow();
  return toBigInt(row.earned);
}

/** A conviction replayed: the figures the first one stored. */
async function replay(trx: Transaction<Database>, auditId: string): Promise<Conviction> {
  const row = await trx
    .selectFrom('trust_audit')
    .select('details')
    .where('id', '=', auditId)
    .executeTakeFirstOrThrow();
  const d = JSON.parse(row.details) as Record<string, string | number | null>;
  const nano = (key: string) => BigInt(d[key] ?? 0);
  return {
    applied: false,
    owner: (d.owner as string | null) ?? null,
    sinceMs: Number(d.sinceMs ?? 0),
    jobs: Number(d.jobs ?? 0),
    refundedJobs: Number(d.refundedJobs ?? 0),
    refundedNano: nano('refundedNano'),
    unrefundedNano: nano('unrefundedNano'),
    forfeitedNano: nano('forfeitedNano'),
    feeReturnedNano: nano('feeReturnedNano'),
    fromPoolNano: nano('fromPoolNano'),
    frozenNano: nano('frozenNano'),
  };
}

async function balanceOf(trx: Transaction<Database>, accountId: string): Promise<bigint> {
  const row = await trx
    .selectFrom('ledger_accounts')
    .select('balance')
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return row ? toBigInt(row.balance) : 0n;
}

function sum(values: readonly bigint[]): bigint {
  return values.reduce((a, b) => a + b, 0n);
}

function min(...values: bigint[]): bigint {
  // biome-ignore lint/complexity/useMathMinMax: bigint (Math.min takes numbers)
  return values.reduce((a, b) => (b < a ? b : a));
}

function max(...values: bigint[]): bigint {
  // biome-ignore lint/complexity/useMathMinMax: bigint (Math.max takes numbers)
  return values.reduce((a, b) => (b > a ? b : a));
}
