import type { Transaction } from 'kysely';
import { getAddress, type Hex } from 'viem';
import type { PoolEvent, PoolParameters } from '../chain/staking-pool.js';
import type { Tier } from '../chain/tiers.js';
import type { Database } from '../db/schema.js';
import { UNBONDING_STATUS } from '../db/tables/chain.js';
import { adjustPosition } from './position-store.js';

/** What applying a pool event needs: the pool's ladder and the configured tier names. */
export type PoolLedgerDeps = {
  parameters: Pick<PoolParameters, 'tiers'>;
  names: readonly Tier[];
  nowMs: number;
};

/** One event the ledger took in (events of wallets that are not ours, and repeats, are left out). */
export type AppliedPoolEvent = {
  /** The stake event's id: `<transaction hash>:<log index>`. */
  id: string;
  kind: 'stake' | 'unstake' | 'release' | 'claim' | 'slash';
  userId: string;
  amountWei: bigint;
  txHash: Hex;
};

/** Bps of a slash's cut, as the pool computes it. */
const BPS = 10_000n;

/**
 * Keeps the ledger's view of the staking pool from its events (a receipt of the service's own call,
 * or a Slashed event found on chain), inside the caller's transaction, each event once (its stake
 * event's id is its place on the chain): Staked adds to the position; UnbondRequested takes from it
 * and opens an unbonding (its release time the pool's); Withdrawn releases the oldest open
 * unbondings it paid; Slashed takes its cut of the position and of every unbonding that existed
 * before it (the pool's own rounding: each amount × bps / 10⁴), the stake event carrying the
 * evidence; RewardsClaimed is recorded. The tier is written with every change of the quantity, so
 * the hub reads it in one indexed query (tier-of.ts). Returns the events applied.
 */
export async function applyPoolEvents(
  trx: Transaction<Database>,
  deps: PoolLedgerDeps,
  events: readonly PoolEvent[],
): Promise<AppliedPoolEvent[]> {
  const applied: AppliedPoolEvent[] = [];
  for (const event of events) {
    if (!('owner' in event.args) || event.eventName === 'RewardsFunded') continue;
    const owner = await trx
      .selectFrom('wallets as w')
      .innerJoin('users as u', 'u.id', 'w.user_id')
      .select(['u.id', 'u.address'])
      .where('w.proxy_address', '=', getAddress(event.args.owner))
      .executeTakeFirst();
    if (!owner) continue;
    const txHash = event.transactionHash;
    const id = `${txHash}:${event.logIndex}`;
    const pos = event.blockNumber * 1_000_000n + BigInt(event.logIndex);
    const record = async (
      kind: AppliedPoolEvent['kind'],
      amountWei: bigint,
      evidence: string | null = null,
    ) => {
      const inserted = await trx
        .insertInto('stake_events')
        .values({
          id,
          user_id: owner.id,
          kind,
          amount_wei: amountWei.toString(),
          tx_hash: txHash,
          evidence,
          created_at: deps.nowMs,
        })
        .onConflict((oc) => oc.column('id').doNothing())
        .returning('id')
        .executeTakeFirst();
      if (!inserted) return false;
      applied.push({ id, kind, userId: owner.id, amountWei, txHash });
      return true;
    };
    const adjust = (delta: bigint) => adjustPosition(trx, deps, owner, delta, deps.nowMs);
    switch (event.eventName) {
      case 'Staked':
        if (await record('stake', event.args.amount)) await adjust(event.args.amount);
        break;
      case 'UnbondRequested':
        if (!(await record('unstake', event.args.amount))) break;
        await adjust(-event.args.amount);
        await trx
          .insertInto('unbondings')
          .values({
            id,
            user_id: owner.id,
            amount_wei: event.args.amount.toString(),
            release_at: Number(event.args.releaseAt) * 1000,
            status: UNBONDING_STATUS.unbonding,
            tx_hash: null,
            chain_pos: pos,
            created_at: deps.nowMs,
          })
          .execute();
        break;
      case 'Withdrawn':
        if (await record('release', event.args.amount)) {
          await releaseOldest(trx, owner.id, event.args.amount, txHash);
        }
        break;
      case 'RewardsClaimed':
        await record('claim', event.args.amount);
        break;
      case 'Slashed': {
        const { fromStaked, fromUnbonding, bps, evidenceHash } = event.args;
        const slash = await trx
          .selectFrom('slashes')
          .select('evidence')
          .where('evidence_hash', '=', evidenceHash)
          .executeTakeFirst();
        if (!(await record('slash', fromStaked + fromUnbonding, slash?.evidence ?? null))) break;
        await adjust(-fromStaked);
        await cutUnbondings(trx, owner.id, bps, pos);
        break;
      }
    }
  }
  return applied;
}

/** Open unbondings of a user, oldest first (as the pool keeps them). */
function openUnbondings(trx: Transaction<Database>, userId: string) {
  return trx
    .selectFrom('unbondings')
    .select(['id', 'amount_wei', 'chain_pos'])
    .where('user_id', '=', userId)
    .where('status', 'in', [UNBONDING_STATUS.unbonding, UNBONDING_STATUS.releasing])
    .orderBy('chain_pos')
    .orderBy('release_at')
    .execute();
}

/** Marks released the oldest open unbondings a withdraw of `amountWei` paid. */
async function releaseOldest(trx: Transaction<Database>, userId: string, amountWei: bigint, txHash: Hex) {
  let left = amountWei;
  for (const row of await openUnbondings(trx, userId)) {
    const amount = BigInt(row.amount_wei);
    if (amount > left) break;
    left -= amount;
    await trx
      .updateTable('unbondings')
      .set({ status: UNBONDING_STATUS.released, tx_hash: txHash })
      .where('id', '=', row.id)
      .execute();
  }
}

/** Cuts `bps` of each unbonding opened before the slash (at chain position `before`). */
async function cutUnbondings(trx: Transaction<Database>, userId: string, bps: bigint, before: bigint) {
  for (const row of await openUnbondings(trx, userId)) {
    if (row.chain_pos !== null && BigInt(row.chain_pos) > before) continue;
    const amount = BigInt(row.amount_wei);
    const cut = (amount * bps) / BPS;
    if (cut === 0n) continue;
    await trx
      .updateTable('unbondings')
      .set({ amount_wei: (amount - cut).toString() })
      .where('id', '=', row.id)
      .execute();
  }
}
