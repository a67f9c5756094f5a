/**
 * Carries out the slashes trust/ orders when it suspends an owned node (table `slashes`): the
 * owner's stake — the staked quantity and what is still unbonding, so unstaking on the first failed
 * check does not escape — drops by `fraction_bps`, a `slash` stake event records the amount with the
 * evidence, and the tokens move from the staking vault to the rewards vault (the pool that pays
 * stakers' rewards), less the transfer's gas, which the vault pays from them. Each step is a guarded status change, so replicas running this at once agree:
 * - pending → signing: the stake drops and the event is written, in one transaction;
 * - signing → signed: the transfer's bytes are stored before broadcast;
 * - signed → sent: the receipt is in. An unmined transfer is broadcast again from its stored bytes
 *   (the same transaction, mined once at most); one the chain refused for good is signed again.
 * An owner with nothing staked: `none`. The stake is never given back: a transfer that never lands
 * leaves the vault holding more than it owes, which the reconciliation check allows.
 */
import { randomUUID } from 'node:crypto';
import { getAddress, type Hex, TransactionNotFoundError, TransactionReceiptNotFoundError } from 'viem';
import { NATIVE_TRANSFER_FEE_WEI, NATIVE_TRANSFER_GAS } from '../chain/constants.js';
import { sendTransaction } from '../chain/send-transaction.js';
import { isPostgres } from '../db/dialect.js';
import { SLASH_STATUS, type SlashStatus } from '../trust/tables.js';
import { currentRewardIndex, lockPosition, savePosition, toSeconds } from './position-store.js';
import { settlePosition } from './rewards.js';
import type { StakingDeps } from './stake.js';

export type SlashReport = { slashed: number; sent: number; none: number };

/** Most slashes one pass handles. */
const BATCH = 20;

/** Executes every open slash; run on a timer by chain/routes.ts (and by tests). */
export async function executeSlashes(deps: Omit<StakingDeps, 'keyring'>): Promise<SlashReport> {
  const report: SlashReport = { slashed: 0, sent: 0, none: 0 };
  const { db, services } = deps;
  if (!services.stakingVault?.account || !services.rewardsVault) return report;
  const open = await db
    .selectFrom('slashes')
    .select(['id', 'status'])
    .where('status', 'in', [SLASH_STATUS.pending, SLASH_STATUS.signing, SLASH_STATUS.signed])
    .orderBy('created_at')
    .limit(BATCH)
    .execute();
  for (const { id, status } of open) {
    if (status === SLASH_STATUS.pending) {
      const amount = await reduceStake(deps, id);
      if (amount === undefined) continue;
      if (amount <= NATIVE_TRANSFER_FEE_WEI) {
        report.none++;
        continue;
      }
      report.slashed++;
    }
    if (await transfer(deps, id)) report.sent++;
  }
  return report;
}

/** pending → signing (or none): the owner's stake and unbondings drop; the amount, or undefined if taken. */
async function reduceStake({ db, services, clock }: Omit<StakingDeps, 'keyring'>, id: string) {
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
    await setStatus(trx, id, worthMoving ? SLASH_STATUS.signing : SLASH_STATUS.none, nowMs, {
      amount_wei: amount.toString(),
      stake_event_id: eventId,
    });
    return amount;
  });
}

/** A claim on a signing slash older than this is taken to be a dead replica's and released. */
const CLAIM_STALE_MS = 60_000;

/**
 * Moves a signing/signed slash's tokens to the rewards vault; true once the receipt is in. Before
 * signing, a replica claims the row (a token in raw_tx, set only where none is), so two never send.
 */
async function transfer({ db, services, clock }: Omit<StakingDeps, 'keyring'>, id: string): Promise<boolean> {
  const vault = services.stakingVault!;
  const slash = await db.selectFrom('slashes').selectAll().where('id', '=', id).executeTakeFirst();
  if (!slash) return false;
  const now = clock.now();
  if (slash.status === SLASH_STATUS.signed && slash.tx_hash) {
    const settled = await services.context.queue.run(vault.address, () =>
      settleSigned(services, slash.tx_hash as Hex, slash.raw_tx as Hex | null),
    );
    if (settled === 'open') return false;
    if (settled === 'mined') return markSent(db, slash, slash.tx_hash, now);
    // Its nonce went to another transaction: it is signed again.
    await db
      .updateTable('slashes')
      .set({ status: SLASH_STATUS.signing, tx_hash: null, raw_tx: null, updated_at: now })
      .where('id', '=', id)
      .where('status', '=', SLASH_STATUS.signed)
      .execute();
  } else if (slash.status !== SLASH_STATUS.signing) {
    return false;
  }
  await db
    .updateTable('slashes')
    .set({ raw_tx: null })
    .where('id', '=', id)
    .where('status', '=', SLASH_STATUS.signing)
    .where('updated_at', '<', now - CLAIM_STALE_MS)
    .execute();
  const claim = `claim:${randomUUID()}`;
  const claimed = await db
    .updateTable('slashes')
    .set({ raw_tx: claim, updated_at: now })
    .where('id', '=', id)
    .where('status', '=', SLASH_STATUS.signing)
    .where('raw_tx', 'is', null)
    .executeTakeFirst();
  if (claimed.numUpdatedRows !== 1n) return false;
  const { hash } = await sendTransaction(services.context, {
    account: vault.account!,
    to: services.rewardsVault!.address,
    // The vault pays the gas out of the slashed amount, so it still holds exactly what it owes.
    value: BigInt(slash.amount_wei ?? '0') - NATIVE_TRANSFER_FEE_WEI,
    gas: NATIVE_TRANSFER_GAS,
    onSigned: async (signed) => {
      await setStatus(db, id, SLASH_STATUS.signed, clock.now(), {
        tx_hash: signed.hash,
        raw_tx: signed.serializedTransaction,
      });
    },
  });
  return markSent(db, slash, hash, clock.now());
}

/** A signed transfer: mined, still open (in the pool, or broadcast again now), or lost for good. */
async function settleSigned(
  services: StakingDeps['services'],
  hash: Hex,
  raw: Hex | null,
): Promise<'mined' | 'open' | 'lost'> {
  const { client } = services.context;
  if (await hasReceipt(services, hash)) return 'mined';
  try {
    await client.getTransaction({ hash });
    return 'open';
  } catch (error) {
    if (!(error instanceof TransactionNotFoundError)) throw error;
  }
  if (!raw) return 'lost';
  try {
    await client.sendRawTransaction({ serializedTransaction: raw });
    return 'open';
  } catch {
    return (await hasReceipt(services, hash)) ? 'mined' : 'lost';
  }
}

async function hasReceipt(services: StakingDeps['services'], hash: Hex): Promise<boolean> {
  try {
    await services.context.client.getTransactionReceipt({ hash });
    return true;
  } catch (error) {
    if (error instanceof TransactionReceiptNotFoundError) return false;
    throw error;
  }
}

async function markSent(
  db: StakingDeps['db'],
  slash: { id: string; stake_event_id: string | null },
  hash: string,
  nowMs: number,
): Promise<true> {
  await db.transaction().execute(async (trx) => {
    await setStatus(trx, slash.id, SLASH_STATUS.sent, nowMs, { tx_hash: hash, raw_tx: null });
    if (slash.stake_event_id) {
      await trx
        .updateTable('stake_events')
        .set({ tx_hash: hash })
        .where('id', '=', slash.stake_event_id)
        .execute();
    }
  });
  return true;
}

async function setStatus(
  db: StakingDeps['db'],
  id: string,
  status: SlashStatus,
  nowMs: number,
  set: {
    amount_wei?: string;
    stake_event_id?: string | null;
    tx_hash?: string | null;
    raw_tx?: string | null;
  },
): Promise<void> {
  await db
    .updateTable('slashes')
    .set({ ...set, status, updated_at: nowMs })
    .where('id', '=', id)
    .execute();
}
