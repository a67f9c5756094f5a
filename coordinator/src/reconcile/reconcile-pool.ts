import type { Kysely } from 'kysely';
import { type Address, getAddress } from 'viem';
import type { StakingPool } from '../chain/staking-pool.js';
import type { Database } from '../db/schema.js';
import { UNBONDING_STATUS } from '../db/tables/chain.js';

/** What the staking pool and the ledger's view of it disagree on (amounts in wei, decimal strings). */
export type PoolDifference =
  /** The pool's balance is not Σ staked + Σ unbonding + its rewards pool. */
  | { check: 'pool_backing'; pool: Address; balance: string; owed: string }
  /** An owner's position in the pool is not what the ledger recorded from the pool's events. */
  | {
      check: 'pool_position';
      user: string;
      account: Address;
      onChain: { staked: string; unbonding: string };
      ledger: { staked: string; unbonding: string };
    }
  /** The ledger holds more stake (or unbonding) than the whole pool (anyone else may add, never less). */
  | { check: 'pool_totals'; what: 'staked' | 'unbonding'; onChain: string; ledger: string };

/** Chain reads in flight at once. */
const READS_IN_FLIGHT = 8;

/**
 * The staking pool against the ledger's view: the pool's balance = Σ staked + Σ unbonding + rewards
 * pool (to the wei); each proxy wallet's position (staked, unbonding) = the ledger's (stakes,
 * open unbondings); and the ledger's sums within the pool's totals. Read-only.
 */
export async function reconcilePool(db: Kysely<Database>, pool: StakingPool): Promise<PoolDifference[]> {
  const differences: PoolDifference[] = [];
  const totals = await pool.totals();
  const owed = totals.staked + totals.unbonding + totals.rewardsPool;
  if (totals.balance !== owed) {
    differences.push({
      check: 'pool_backing',
      pool: pool.address,
      balance: `${totals.balance}`,
      owed: `${owed}`,
    });
  }
  const wallets = await db.selectFrom('wallets').select(['user_id', 'proxy_address']).execute();
  const staked = new Map(
    (await db.selectFrom('stakes').select(['user_id', 'quantity_wei']).execute()).map((s) => [
      s.user_id,
      BigInt(s.quantity_wei),
    ]),
  );
  const unbonding = new Map<string, bigint>();
  const open = await db
    .selectFrom('unbondings')
    .select(['user_id', 'amount_wei'])
    .where('status', 'in', [UNBONDING_STATUS.unbonding, UNBONDING_STATUS.releasing])
    .execute();
  for (const u of open) unbonding.set(u.user_id, (unbonding.get(u.user_id) ?? 0n) + BigInt(u.amount_wei));
  let ledgerStaked = 0n;
  let ledgerUnbonding = 0n;
  for (let i = 0; i < wallets.length; i += READS_IN_FLIGHT) {
    await Promise.all(
      wallets.slice(i, i + READS_IN_FLIGHT).map(async ({ user_id, proxy_address }) => {
        const account = getAddress(proxy_address);
        const position = await pool.position(account, totals.blockNumber);
        const ledger = { staked: staked.get(user_id) ?? 0n, unbonding: unbonding.get(user_id) ?? 0n };
        ledgerStaked += ledger.staked;
        ledgerUnbonding += ledger.unbonding;
        if (position.staked !== ledger.staked || position.unbonding !== ledger.unbonding) {
          differences.push({
            check: 'pool_position',
            user: user_id,
            account,
            onChain: { staked: `${position.staked}`, unbonding: `${position.unbonding}` },
            ledger: { staked: `${ledger.staked}`, unbonding: `${ledger.unbonding}` },
          });
        }
      }),
    );
  }
  if (ledgerStaked > totals.staked) {
    differences.push({
      check: 'pool_totals',
      what: 'staked',
      onChain: `${totals.staked}`,
      ledger: `${ledgerStaked}`,
    });
  }
  if (ledgerUnbonding > totals.unbonding) {
    differences.push({
      check: 'pool_totals',
      what: 'unbonding',
      onChain: `${totals.unbonding}`,
      ledger: `${ledgerUnbonding}`,
    });
  }
  return differences;
}
