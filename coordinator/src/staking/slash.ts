/**
 * Carries out the slashes trust/ orders when it suspends an owned node (table `slashes`): the
 * owner's stake — the staked quantity and what is still unbonding, so unstaking on the first failed
 * check does not escape — drops by `fraction_bps`, a `slash` stake event records the amount with the
 * evidence, and the tokens move from the staking vault to the rewards vault (the pool that pays
 * stakers' rewards), less the transfer's gas, which the vault pays from them. The move goes through
 * the transfer outbox (chain/transfer-outbox.ts; slash-transfers.ts says how it ends):
 * - pending → signing: the stake drops, the event is written and the transfer enqueued, in one
 *   transaction (the slash's `raw_tx` names its open transfer, `transfer:<id>`);
 * - signing → signed → sent, as the transfer is signed (bytes stored) and mined. A transfer that
 *   can never land (replaced, reverted, cancelled) puts the slash back to signing without one, and
 *   the next pass enqueues a new transfer (one at a time: a guarded change of `raw_tx`).
 * An owner with nothing staked: `none`. The stake is never given back: a transfer that never lands
 * leaves the vault holding more than it owes, which the reconciliation check allows. Errors are
 * logged per slash, and the pass goes on.
 */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { getAddress } from 'viem';
import { NATIVE_TRANSFER_FEE_WEI, NATIVE_TRANSFER_GAS } from '../chain/constants.js';
import type { ChainServices } from '../chain/create-chain-services.js';
import { enqueueTransfer } from '../chain/enqueue-transfer.js';
import type { TransferOutbox } from '../chain/transfer-outbox.js';
import type { OutboxLog } from '../chain/transfer-types.js';
import { isPostgres } from '../db/dialect.js';
import type { Database } from '../db/schema.js';
import { OPEN_TRANSFER, TRANSFER_STATUS } from '../db/tables/chain.js';
import { SLASH_STATUS } from '../db/tables/trust.js';
import { currentRewardIndex, lockPosition, savePosition, toSeconds } from './position-store.js';
import { settlePosition } from './rewards.js';
import { SLASH_PURPOSE, TRANSFER_REF_PREFIX } from './slash-transfers.js';
import type { StakingDeps } from './stake.js';

export type SlashDeps = Omit<StakingDeps, 'keyring'> & {
  /** The outbox, with slashTransfers registered for 'slash'. */
  outbox: TransferOutbox;
  log: OutboxLog;
};

export type SlashReport = { slashed: number; sent: number; none: number };

/** Most slashes one pass handles. */
const BATCH = 20;

/** Executes every open slash; run on a timer by compose/register-chain.ts (and by tests). */
export async function executeSlashes(deps: SlashDeps): Promise<SlashReport> {
  const report: SlashReport = { slashed: 0, sent: 0, none: 0 };
  const { db, services, outbox, log } = deps;
  if (!services.stakingVault?.account || !services.rewardsVault) return report;
  const open = await db
    .selectFrom('slashes')
    .select(['id', 'status'])
    .where('status', 'in', [SLASH_STATUS.pending, SLASH_STATUS.signing, SLASH_STATUS.signed])
    .orderBy('created_at')
    .limit(BATCH)
    .execute();
  for (const { id, status } of open) {
    try {
      if (status === SLASH_STATUS.pending) {
        const amount = await reduceStake(deps, id);
        if (amount === undefined) continue;
        if (amount <= NATIVE_TRANSFER_FEE_WEI) {
          report.none++;
          continue;
        }
        report.slashed++;
      }
      const transferId = await openTransfer(deps, id);
      if (!transferId) continue;
      const { transfer } = await outbox.process(transferId);
      if (transfer.status === TRANSFER_STATUS.mined) report.sent++;
    } catch (error) {
      log.error({ err: error, slash: id }, 'slash: the pass failed on this slash; the next pass retries');
    }
  }
  return report;
}

/**
 * The slash's open transfer: the one it names, or — the last one could never land, or an earlier
 * version left the slash signed with its bytes on the row — a new one (guarded: one per slash).
 */
async function openTransfer({ db, services, clock }: SlashDeps, id: string): Promise<string | undefined> {
  const slash = await db.selectFrom('slashes').selectAll().where('id', '=', id).executeTakeFirst();
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
    return open?.id;
  }
  const now = clock.now();
  // An earlier version's claim token (`claim:…`) of a replica that is gone, or its signed bytes.
  const legacyRaw = slash.raw_tx?.startsWith('0x') ? slash.raw_tx : null;
  if (slash.raw_tx && !legacyRaw && Number(slash.updated_at) > now - LEGACY_CLAIM_STALE_MS) return undefined;
  return db.transaction().execute(async (trx) => {
    const transferId = await enqueueSlashTransfer(trx, services, {
      slashId: id,
      amountWei: BigInt(slash.amount_wei ?? '0'),
      now,
    });
    const taken = await trx
      .updateTable('slashes')
      .set({ raw_tx: `${TRANSFER_REF_PREFIX}${transferId}`, updated_at: now })
      .where('id', '=', id)
      .where('status', '=', slash.status)
      .where((eb) => (slash.raw_tx === null ? eb('raw_tx', 'is', null) : eb('raw_tx', '=', slash.raw_tx)))
      .executeTakeFirst();
    if (taken.numUpdatedRows !== 1n) {
      await trx.deleteFrom('chain_transfers').where('id', '=', transferId).execute();
      return undefined;
    }
    if (legacyRaw && slash.tx_hash) {
      // Signed before the outbox: its bytes are sent again, never signed again.
      await trx
        .updateTable('chain_transfers')
        .set({ status: TRANSFER_STATUS.signed, tx_hash: slash.tx_hash, raw_tx: legacyRaw })
        .where('id', '=', transferId)
        .execute();
    }
    return transferId;
  });
}

/** A claim token an earlier version left on a signing slash is its dead replica's after this. */
const LEGACY_CLAIM_STALE_MS = 60_000;

/** Enqueues the move of a slash's `amountWei`, less the gas the vault pays out of it. */
function enqueueSlashTransfer(
  trx: Kysely<Database>,
  services: ChainServices,
  { slashId, amountWei, now }: { slashId: string; amountWei: bigint; now: number },
): Promise<string> {
  // The vault pays the gas out of the slashed amount, so it still holds exactly what it owes.
  const value = amountWei - NATIVE_TRANSFER_FEE_WEI;
  return enqueueTransfer(trx, {
    purpose: SLASH_PURPOSE,
    ref: slashId,
    from: services.stakingVault!.address,
    to: services.rewardsVault!.address,
    valueWei: value,
    gas: NATIVE_TRANSFER_GAS,
    asset: 'native',
    amount: value,
    now,
  });
}

/** pending → signing (or none): the owner's stake and unbondings drop; the amount, or undefined if taken. */
async function reduceStake({ db, services, clock }: SlashDeps, id: string) {
  return db.transaction().execute(async (trx) => {
    let query = trx.selectFrom('slashes').selectAll().where('id', '=', id);
    if (isPostgres(trx)) query = query.forUpdate();
    const slash = await query.executeTakeFirst();
    if (!slash || slash.status !== SLASH_STATUS.pending) return undefined;
    const nowMs = clock.now();
    const bps = BigInt(slash.fraction_bps);
    const user = await trx
      .selectFrom('users')
      .select(['id', 'address'])
      .where('address', '=', getAddress(slash.owner))
      .executeTakeFirst();
    let amount = 0n;
    if (user) {
      const index = await currentRewardIndex(trx, services, toSeconds(nowMs));
      const position = settlePosition(await lockPosition(trx, services, user, index, nowMs), index);
      const fromStake = (position.quantityWei * bps) / 10_000n;
      await savePosition(
        trx,
        services,
        { ...position, quantityWei: position.quantityWei - fromStake },
        nowMs,
      );
      amount += fromStake;
      const unbonding = await trx
        .selectFrom('unbondings')
        .select(['id', 'amount_wei'])
        .where('user_id', '=', user.id)
        .where('status', '=', 'unbonding')
        .execute();
      for (const u of unbonding) {
        const cut = (BigInt(u.amount_wei) * bps) / 10_000n;
        if (cut === 0n) continue;
        await trx
          .updateTable('unbondings')
          .set({ amount_wei: (BigInt(u.amount_wei) - cut).toString() })
          .where('id', '=', u.id)
          .execute();
        amount += cut;
      }
    }
    let eventId: string | null = null;
    if (user && amount > 0n) {
      eventId = randomUUID();
      await trx
        .insertInto('stake_events')
        .values({
          id: eventId,
          user_id: user.id,
          kind: 'slash',
          amount_wei: amount.toString(),
          tx_hash: null,
          evidence: slash.evidence,
          created_at: nowMs,
        })
        .execute();
    }
    const worthMoving = amount > NATIVE_TRANSFER_FEE_WEI;
    const transferId = worthMoving
      ? await enqueueSlashTransfer(trx, services, { slashId: id, amountWei: amount, now: nowMs })
      : null;
    await trx
      .updateTable('slashes')
      .set({
        status: worthMoving ? SLASH_STATUS.signing : SLASH_STATUS.none,
        amount_wei: amount.toString(),
        stake_event_id: eventId,
        raw_tx: transferId ? `${TRANSFER_REF_PREFIX}${transferId}` : null,
        updated_at: nowMs,
      })
      .where('id', '=', id)
      .execute();
    return amount;
  });
}
