/**
 * The books against the chain: an operator's check, and what the end-to-end suites run at their
 * end. Every credit must stand on tokens that exist, and the ledger must add up.
 */
import { type Kysely, sql } from 'kysely';
import { type Address, erc20Abi, getAddress, type Hex, TransactionReceiptNotFoundError } from 'viem';
import { PAYMENT_SOURCES, type PaymentSource } from '../chain/constants.js';
import type { ChainServices } from '../chain/create-chain-services.js';
import { wrapChainError } from '../chain/wrap-chain-error.js';
import { toBigInt } from '../db/bigint.js';
import type { Database } from '../db/schema.js';
import { ENTRY_KINDS, RESERVATION_STATUS } from '../db/tables/ledger.js';
import { PAYOUT_STATUS, UNSETTLED } from '../db/tables/provider.js';
import { type PoolDifference, reconcilePool } from './reconcile-pool.js';

/** What a check found that does not hold. Amounts are integer strings in the named unit. */
export type ReconcileDifference =
  /** An account's balance is not the sum of its ledger entries (nanousd). */
  | { check: 'ledger_balance'; account: string; balance: string; sumOfEntries: string }
  /** Entries of a kind that only moves money between accounts do not net to zero (nanousd). */
  | { check: 'transfer_net'; kind: string; net: string }
  /** An account's reserved credits are not the sum of its open holds (nanousd). */
  | { check: 'ledger_reserved'; account: string; reserved: string; sumOfHolds: string }
  /** A hold older than the stale-hold sweep's age: nobody will settle it. */
  | { check: 'stale_hold'; reservation: string; account: string; amount: string; ageMs: number }
  /** A proxy wallet holds fewer tokens than its credited top-ups (smallest unit of `token`). */
  | {
      check: 'wallet_backing';
      wallet: string;
      user: string;
      token: PaymentSource;
      onChain: string;
      credited: string;
    }
  /** Without a staking pool: the staking vault holds less than is staked and unbonding (wei). */
  | { check: 'vault_backing'; wallet: string; onChain: string; staked: string }
  /** The staking pool and the ledger's view of it (reconcile-pool.ts). */
  | PoolDifference
  /** A payout's ledger entries do not net to what its status says (−amount, or 0 when failed). */
  | { check: 'payout_ledger'; payout: string; status: string; expected: string; entries: string }
  /** A payout still open after the stale age: the settlement has not finished it. */
  | { check: 'payout_unsettled'; payout: string; status: string; ageMs: number }
  /** The chain disagrees with a payout: paid without a successful receipt, or failed with one. */
  | { check: 'payout_chain'; payout: string; status: string; txId: string | null; onChain: string };

export type ReconcileReport = {
  differences: ReconcileDifference[];
  /** How much was looked at, so an empty list means something. */
  checked: { accounts: number; openHolds: number; wallets: number; tokens: number; payouts: number };
};

export type ReconcileParameters = {
  db: Kysely<Database>;
  /** Without a chain, only the ledger is checked. */
  services: ChainServices | undefined;
  /** Holds older than this are stale (see staleHoldAgeMs). */
  staleHoldMs: number;
  now: number;
};

/** Entry kinds that only move money between accounts: per kind, the amounts net to zero. */
const TRANSFER_KINDS = [
  ENTRY_KINDS.earningsTransfer,
  ENTRY_KINDS.trustPayment,
  ENTRY_KINDS.earningsForfeit,
  ENTRY_KINDS.feeReturn,
  ENTRY_KINDS.convictionRefund,
];

/** Chain reads in flight at once while checking wallets. */
const CHAIN_READS_IN_FLIGHT = 8;

/**
 * Checks, and reports every difference (an empty list means the books hold):
 * - ledger: each account's balance = Σ its entries; its reserved = Σ its open holds; no open hold
 *   older than `staleHoldMs`; the entries of each kind that moves money between accounts (earnings
 *   transfers, trust payments, a conviction's forfeits, fee returns and refunds) net to zero;
 * - payouts: each payout's entries net to −its amount (0 once failed and given back); none is
 *   left open past the stale age; each paid one has a successful receipt and no failed one does
 *   (nothing paid and given back too);
 * - chain: each proxy wallet holds at least the tokens its credited top-ups brought, per token
 *   (credited tokens never leave the wallet: withdrawals and stakes spend only the rest, so this
 *   is "deposits − withdrawals − staked ≥ credited");
 * - staking: the pool's balance = Σ staked + unbonding + rewards pool, and each proxy wallet's
 *   position there = the ledger's view of it (reconcile-pool.ts); without a pool, the staking vault
 *   holds at least what is staked or unbonding.
 * Read-only. Run it when the ledger is quiet (a settlement in flight between two reads can show
 * as a difference that is gone on the next run).
 */
export async function reconcile({
  db,
  services,
  staleHoldMs,
  now,
}: ReconcileParameters): Promise<ReconcileReport> {
  const differences: ReconcileDifference[] = [];

  const accounts = await db
    .selectFrom('ledger_accounts as a')
    .select([
      'a.account_id',
      'a.balance',
      'a.reserved',
      sql<
        string | number
      >`(select coalesce(sum(e.amount), 0) from ledger_entries e where e.account_id = a.account_id)`.as(
        'entries',
      ),
      sql<
        string | number
      >`(select coalesce(sum(r.amount), 0) from ledger_reservations r where r.account_id = a.account_id and r.status = ${RESERVATION_STATUS.held})`.as(
        'holds',
      ),
    ])
    .execute();
  for (const a of accounts) {
    const [balance, entries, reserved, holds] = [a.balance, a.entries, a.reserved, a.holds].map(toBigInt) as [
      bigint,
      bigint,
      bigint,
      bigint,
    ];
    if (balance !== entries) {
      differences.push({
        check: 'ledger_balance',
        account: a.account_id,
        balance: `${balance}`,
        sumOfEntries: `${entries}`,
      });
    }
    if (reserved !== holds) {
      differences.push({
        check: 'ledger_reserved',
        account: a.account_id,
        reserved: `${reserved}`,
        sumOfHolds: `${holds}`,
      });
    }
  }
  // Entries of an account that has no row at all.
  const orphans = await db
    .selectFrom('ledger_entries as e')
    .leftJoin('ledger_accounts as a', 'a.account_id', 'e.account_id')
    .where('a.account_id', 'is', null)
    .select(['e.account_id', sql<string | number>`sum(e.amount)`.as('total')])
    .groupBy('e.account_id')
    .execute();
  for (const o of orphans) {
    differences.push({
      check: 'ledger_balance',
      account: o.account_id,
      balance: '0',
      sumOfEntries: `${toBigInt(o.total)}`,
    });
  }

  // Moves between accounts (two entries summing to zero each): any other sum is half a move.
  const transfers = await db
    .selectFrom('ledger_entries')
    .select(['kind', sql<string | number>`sum(amount)`.as('net')])
    .where('kind', 'in', TRANSFER_KINDS)
    .groupBy('kind')
    .execute();
  for (const t of transfers) {
    const net = toBigInt(t.net);
    if (net !== 0n) differences.push({ check: 'transfer_net', kind: t.kind, net: `${net}` });
  }

  const holds = await db
    .selectFrom('ledger_reservations')
    .select(['id', 'account_id', 'amount', 'created_at'])
    .where('status', '=', RESERVATION_STATUS.held)
    .execute();
  for (const h of holds) {
    const ageMs = now - Number(toBigInt(h.created_at));
    if (ageMs > staleHoldMs) {
      differences.push({
        check: 'stale_hold',
        reservation: h.id,
        account: h.account_id,
        amount: `${toBigInt(h.amount)}`,
        ageMs,
      });
    }
  }

  const payouts = await db
    .selectFrom('provider_payouts as p')
    .select([
      'p.id',
      'p.status',
      'p.usd_nano',
      'p.tx_hash',
      'p.updated_at',
      sql<
        string | number
      >`(select coalesce(sum(e.amount), 0) from ledger_entries e where e.ref = p.id and e.kind in (${ENTRY_KINDS.payout}, ${ENTRY_KINDS.payoutRefund}))`.as(
        'entries',
      ),
    ])
    .execute();
  for (const p of payouts) {
    const expected = p.status === PAYOUT_STATUS.failed ? 0n : -toBigInt(p.usd_nano);
    const entries = toBigInt(p.entries);
    if (entries !== expected) {
      differences.push({
        check: 'payout_ledger',
        payout: p.id,
        status: p.status,
        expected: `${expected}`,
        entries: `${entries}`,
      });
    }
    const ageMs = now - Number(toBigInt(p.updated_at));
    if ((UNSETTLED as readonly string[]).includes(p.status) && ageMs > staleHoldMs) {
      differences.push({ check: 'payout_unsettled', payout: p.id, status: p.status, ageMs });
    }
  }

  let wallets = 0;
  let tokens = 0;
  if (services) {
    const settled = payouts.filter(
      (p) => p.tx_hash && (p.status === PAYOUT_STATUS.paid || p.status === PAYOUT_STATUS.failed),
    );
    for (let i = 0; i < settled.length; i += CHAIN_READS_IN_FLIGHT) {
      await Promise.all(
        settled.slice(i, i + CHAIN_READS_IN_FLIGHT).map(async (p) => {
          const onChain = await receiptStatus(services, p.tx_hash as Hex);
          const agrees = p.status === PAYOUT_STATUS.paid ? onChain === 'success' : onChain !== 'success';
          if (!agrees) {
            differences.push({
              check: 'payout_chain',
              payout: p.id,
              status: p.status,
              txId: p.tx_hash,
              onChain,
            });
          }
        }),
      );
    }
    const sources = PAYMENT_SOURCES.filter((s) => s === 'native' || services.tokens[s]);
    tokens = sources.length;
    const credited = new Map<string, bigint>();
    const topups = await db.selectFrom('topups').select(['user_id', 'source', 'amount']).execute();
    for (const t of topups) {
      const key = `${t.user_id}:${t.source}`;
      credited.set(key, (credited.get(key) ?? 0n) + BigInt(t.amount));
    }
    const proxies = await db.selectFrom('wallets').select(['user_id', 'proxy_address']).execute();
    wallets = proxies.length;
    const checks = proxies.flatMap((p) => sources.map((token) => ({ ...p, token })));
    for (let i = 0; i < checks.length; i += CHAIN_READS_IN_FLIGHT) {
      await Promise.all(
        checks.slice(i, i + CHAIN_READS_IN_FLIGHT).map(async ({ user_id, proxy_address, token }) => {
          const backing = credited.get(`${user_id}:${token}`) ?? 0n;
          if (backing === 0n) return;
          const onChain = await balanceOf(services, getAddress(proxy_address), token);
          if (onChain < backing) {
            differences.push({
              check: 'wallet_backing',
              wallet: getAddress(proxy_address),
              user: user_id,
              token,
              onChain: `${onChain}`,
              credited: `${backing}`,
            });
          }
        }),
      );
    }
    if (services.stakingPool) {
      differences.push(...(await reconcilePool(db, services.stakingPool)));
    } else if (services.stakingVault) {
      const staked = await db.selectFrom('stakes').select('quantity_wei').execute();
      const unbonding = await db
        .selectFrom('unbondings')
        .select('amount_wei')
        .where('status', 'in', ['unbonding', 'releasing'])
        .execute();
      const owed =
        staked.reduce((sum, s) => sum + BigInt(s.quantity_wei), 0n) +
        unbonding.reduce((sum, u) => sum + BigInt(u.amount_wei), 0n);
      const onChain = await balanceOf(services, services.stakingVault.address, 'native');
      if (onChain < owed) {
        differences.push({
          check: 'vault_backing',
          wallet: services.stakingVault.address,
          onChain: `${onChain}`,
          staked: `${owed}`,
        });
      }
    }
  }
  return {
    differences,
    checked: { accounts: accounts.length, openHolds: holds.length, wallets, tokens, payouts: payouts.length },
  };
}

async function receiptStatus(services: ChainServices, hash: Hex): Promise<'success' | 'reverted' | 'none'> {
  try {
    const receipt = await services.context.client.getTransactionReceipt({ hash });
    return receipt.status;
  } catch (error) {
    if (error instanceof TransactionReceiptNotFoundError) return 'none';
    throw wrapChainError(error);
  }
}

async function balanceOf(services: ChainServices, owner: Address, token: PaymentSource): Promise<bigint> {
  try {
    if (token === 'native') return await services.context.client.getBalance({ address: owner });
    return await services.context.client.readContract({
      address: services.tokens[token]!,
      abi: erc20Abi,
      functionName: 'balanceOf',
      args: [owner],
    });
  } catch (error) {
    throw wrapChainError(error);
  }
}
