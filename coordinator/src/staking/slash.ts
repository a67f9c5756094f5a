/**
 * Carries out the slashes trust/ orders when it suspends an owned node (table `slashes`) as calls of
 * the staking pool's `slash(owner, bps, convictionId, evidenceHash)` by its slasher, through the
 * transfer outbox: the pool cuts `bps` (the order's fraction, at most the pool's cap) of the owner's
 * staked amount and of every unbonding into its rewards pool, once per conviction id (the keccak-256
 * of the slash's id), and its Slashed event names the sha256 of the evidence JSON the coordinator
 * serves at `/api/evidence/<hash>` (evidence-routes.ts). The slash moves
 * - pending → signing: the call enqueued with the slash naming it (`raw_tx` = `transfer:<id>`), in one
 *   guarded transaction (so passes racing each other send it once); or none: the owner has no proxy
 *   wallet or nothing in the pool;
 * - signing → signed → sent, as the call is signed (bytes stored) and mined; its event then takes
 *   the cut off the ledger's view and writes the `slash` stake event with the evidence
 *   (pool-transfers.ts, apply-pool-events.ts). A call that can never land puts the slash back to
 *   signing without a transfer, and the next pass sends another — unless the pool already has the
 *   conviction (a call mined whose end was never recorded): then its Slashed event is applied. A
 *   call refused before signing (the pool's simulation would revert) is tried again only after an
 *   exponential back-off recorded on its outbox row (chain/refusal-backoff.ts: 30 s, 1 min, … 6 h).
 * A slash the vault era had already taken off the ledger (its stake event written, its tokens
 * still in the vault) is the vault migration's (staking/migrate-vault.ts), never the pool's.
 * Errors are logged per slash, and the pass goes on.
 */
import type { Transaction } from 'kysely';
import { getAddress, type Hex, keccak256, toBytes } from 'viem';
import { refusedUntil } from '../chain/refusal-backoff.js';
import type { PoolCall, StakingPool } from '../chain/staking-pool.js';
import type { OutboxLog } from '../chain/transfer-types.js';
import type { Database } from '../db/schema.js';
import { OPEN_TRANSFER, TRANSFER_STATUS } from '../db/tables/chain.js';
import { SLASH_STATUS, type SlashStatus } from '../db/tables/trust.js';
import { evidenceHashOf } from '../trust/slashing/evidence-hash.js';
import { applyPoolEvents } from './apply-pool-events.js';
import { enqueuePoolCall } from './enqueue-pool-call.js';
import { POOL_PURPOSES, TRANSFER_REF_PREFIX } from './pool-transfers.js';
import type { StakingDeps } from './staking-deps.js';

export type SlashDeps = Omit<StakingDeps, 'keyring'> & { log: OutboxLog };

export type SlashReport = { slashed: number; sent: number; none: number };

/** Most slashes one pass handles. */
const BATCH = 20;

/** The pool's conviction id of a slash: keccak-256 of its id. */
export function convictionIdOf(slashId: string): Hex {
  return keccak256(toBytes(slashId));
}

/** Executes every open slash; run on a timer by compose/register-chain.ts (and by tests). */
export async function executeSlashes(deps: SlashDeps): Promise<SlashReport> {
  const report: SlashReport = { slashed: 0, sent: 0, none: 0 };
  const { db, services, outbox, log } = deps;
  const pool = services.stakingPool;
  if (!pool?.slasher) return report;
  const open = await db
    .selectFrom('slashes')
    .select(['id', 'status'])
    .where('status', 'in', [SLASH_STATUS.pending, SLASH_STATUS.signing, SLASH_STATUS.signed])
    // The vault era wrote the stake event when it cut the ledger: such a slash is never cut again.
    .where('stake_event_id', 'is', null)
    .orderBy('created_at')
    .limit(BATCH)
    .execute();
  for (const { id, status } of open) {
    try {
      await pool.parameters();
      let transferId: string | undefined;
      if (status === SLASH_STATUS.pending) {
        const ordered = await order(deps, pool, id);
        if (ordered === 'none') report.none++;
        if (typeof ordered !== 'object') continue;
        report.slashed++;
        transferId = ordered.transferId;
      } else {
        transferId = await openTransfer(deps, pool, id);
      }
      if (!transferId) continue;
      const { transfer } = await outbox.process(transferId);
      if (transfer.status === TRANSFER_STATUS.mined) report.sent++;
    } catch (error) {
      log.error({ err: error, slash: id }, 'slash: the pass failed on this slash; the next pass retries');
    }
  }
  return report;
}

async function readSlash({ db }: SlashDeps, id: string) {
  return db.selectFrom('slashes').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * The pool call a slash makes, or none: an owner without a proxy wallet or with nothing in the
 * pool (staked or unbonding), or a fraction of 0.
 */
async function slashCall(
  { db }: SlashDeps,
  pool: StakingPool,
  slash: { id: string; owner: string; fraction_bps: number | string | bigint; evidence: string },
): Promise<PoolCall | undefined> {
  const wallet = await db
    .selectFrom('users as u')
    .innerJoin('wallets as w', 'w.user_id', 'u.id')
    .select('w.proxy_address')
    .where('u.address', '=', getAddress(slash.owner))
    .executeTakeFirst();
  if (!wallet) return undefined;
  const owner = getAddress(wallet.proxy_address);
  const { slashBps } = await pool.parameters();
  const asked = BigInt(slash.fraction_bps);
  const bps = asked < slashBps ? asked : slashBps;
  const position = await pool.position(owner);
  if (bps === 0n || position.staked + position.unbonding === 0n) return undefined;
  return {
    fn: 'slash',
    owner,
    bps,
    convictionId: convictionIdOf(slash.id),
    evidenceHash: evidenceHashOf(slash.evidence),
  };
}

/** pending → signing with its call enqueued, or → none; `recovered` when the pool already had it. */
async function order(
  deps: SlashDeps,
  pool: StakingPool,
  id: string,
): Promise<'none' | 'recovered' | undefined | { transferId: string }> {
  const slash = await readSlash(deps, id);
  if (!slash || slash.status !== SLASH_STATUS.pending) return undefined;
  if (await recover(deps, pool, slash)) return 'recovered';
  const call = await slashCall(deps, pool, slash);
  const evidenceHash = evidenceHashOf(slash.evidence);
  const now = deps.clock.now();
  if (!call) {
    const result = await deps.db
      .updateTable('slashes')
      .set({ status: SLASH_STATUS.none, amount_wei: '0', evidence_hash: evidenceHash, updated_at: now })
      .where('id', '=', id)
      .where('status', '=', SLASH_STATUS.pending)
      .executeTakeFirst();
    return result.numUpdatedRows === 1n ? 'none' : undefined;
  }
  const transferId = await deps.db.transaction().execute((trx) =>
    enqueueSlash(trx, pool, { id, status: SLASH_STATUS.pending }, call, now, {
      evidence_hash: evidenceHash,
    }),
  );
  return transferId ? { transferId } : undefined;
}

/**
 * The open transfer of a slash in signing or signed: the one it names, or — the last could never
 * land, or an earlier version left something else there — a new call (guarded: one per slash),
 * unless the pool already slashed this conviction (then its event is applied).
 */
async function openTransfer(deps: SlashDeps, pool: StakingPool, id: string): Promise<string | undefined> {
  const { db, clock } = deps;
  const slash = await readSlash(deps, id);
  if (!slash || (slash.status !== SLASH_STATUS.signing && slash.status !== SLASH_STATUS.signed))
    return undefined;
  if (slash.raw_tx?.startsWith(TRANSFER_REF_PREFIX)) {
    const named = slash.raw_tx.slice(TRANSFER_REF_PREFIX.length);
    const open = await db
      .selectFrom('chain_transfers')
      .select('id')
      .where('id', '=', named)
      .where('status', 'in', OPEN_TRANSFER)
      .executeTakeFirst();
    if (open) return open.id;
  }
  if (await recover(deps, pool, slash)) return undefined;
  const now = clock.now();
  // The last call was refused before signing: not again before its back-off ends.
  if (await refusedUntil(db, { purpose: POOL_PURPOSES.slash, ref: id, nowMs: now })) return undefined;
  const call = await slashCall(deps, pool, slash);
  return db.transaction().execute(async (trx) => {
    if (!call) {
      await trx
        .updateTable('slashes')
        .set({ status: SLASH_STATUS.none, amount_wei: '0', raw_tx: null, updated_at: now })
        .where('id', '=', id)
        .where('status', '=', slash.status)
        .execute();
      return undefined;
    }
    return enqueueSlash(trx, pool, slash, call, now);
  });
}

/**
 * The pool call of a slash put in the outbox, and the slash taken for it (signing, naming the
 * transfer) — only if the row is still as read (`status`, and `raw_tx` when given); otherwise the
 * transfer is dropped and nothing is taken.
 */
async function enqueueSlash(
  trx: Transaction<Database>,
  pool: StakingPool,
  slash: { id: string; status: SlashStatus; raw_tx?: string | null },
  call: PoolCall,
  now: number,
  extra: { evidence_hash?: string } = {},
): Promise<string | undefined> {
  const transferId = await enqueuePoolCall(trx, {
    purpose: POOL_PURPOSES.slash,
    ref: slash.id,
    from: pool.slasher!.address,
    pool,
    call,
    now,
  });
  let update = trx
    .updateTable('slashes')
    .set({
      status: SLASH_STATUS.signing,
      raw_tx: `${TRANSFER_REF_PREFIX}${transferId}`,
      ...extra,
      updated_at: now,
    })
    .where('id', '=', slash.id)
    .where('status', '=', slash.status);
  if (slash.raw_tx !== undefined) {
    const rawTx = slash.raw_tx;
    update = update.where((eb) => (rawTx === null ? eb('raw_tx', 'is', null) : eb('raw_tx', '=', rawTx)));
  }
  const taken = await update.executeTakeFirst();
  if (taken.numUpdatedRows === 1n) return transferId;
  await trx.deleteFrom('chain_transfers').where('id', '=', transferId).execute();
  return undefined;
}

/**
 * A slash the pool already carried out (a call mined whose end no process recorded): its Slashed
 * event applied to the ledger's view and the slash sent, with the event's transaction. False when
 * the pool has not slashed this conviction.
 */
async function recover(
  { db, services, clock }: SlashDeps,
  pool: StakingPool,
  slash: { id: string; evidence: string; status: SlashStatus },
): Promise<boolean> {
  const convictionId = convictionIdOf(slash.id);
  if (!(await pool.convictionSlashed(convictionId))) return false;
  const event = await pool.slashedEvent(convictionId);
  if (event?.eventName !== 'Slashed') return false;
  const parameters = await pool.parameters();
  const nowMs = clock.now();
  await db.transaction().execute(async (trx) => {
    await trx
      .updateTable('slashes')
      .set({ evidence_hash: evidenceHashOf(slash.evidence) })
      .where('id', '=', slash.id)
      .execute();
    await applyPoolEvents(trx, { parameters, names: services.tiers, nowMs }, [event]);
    await trx
      .updateTable('slashes')
      .set({
        status: SLASH_STATUS.sent,
        tx_hash: event.transactionHash,
        raw_tx: null,
        amount_wei: (event.args.fromStaked + event.args.fromUnbonding).toString(),
        stake_event_id: `${event.transactionHash}:${event.logIndex}`,
        updated_at: nowMs,
      })
      .where('id', '=', slash.id)
      .where('status', '=', slash.status)
      .execute();
  });
  return true;
}
