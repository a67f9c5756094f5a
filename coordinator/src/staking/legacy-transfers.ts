/**
 * The vault era's outbox purposes — `release` (staking vault → proxy wallet, an unbonding paid),
 * `slash` (staking vault → rewards vault, the ledger already cut) and `claim` (rewards vault → proxy
 * wallet, a reward payout) — registered again so the vault migration (migrate-vault.ts) can end every
 * row a coordinator of that era left open:
 * - a row already signed or broadcast may be on chain: it is finished from its stored bytes, never
 *   signed again, and ends as that era's code ended it (released, sent, paid);
 * - a release or slash never signed is refused before signing (`moved_to_pool`, nothing sent) and
 *   mapped to its pool equivalent: the unbonding waits again and moves into the pool as an unbonding
 *   with its release time; the slash's tokens go to the pool's rewards pool (a `slash` step);
 * - a claim never signed is paid as that era paid it (the owner earned it in that era).
 * A row that can never land ends as above too: the unbonding waits, the slash moves, the payout
 * fails and its amount goes back to the owner's accrued rewards (paid by the migration's `reward`).
 */
import { randomUUID } from 'node:crypto';
import type { ChainServices } from '../chain/create-chain-services.js';
import type { TransferHandler } from '../chain/transfer-types.js';
import type { Clock } from '../clock.js';
import { PAYOUT_STATUS, UNBONDING_STATUS } from '../db/tables/chain.js';
import { SLASH_STATUS } from '../db/tables/trust.js';
import { ApiError } from '../errors.js';

/** The vault era's outbox purposes (the ref: the unbonding's, the slash's, the payout's id). */
export const LEGACY_PURPOSES = { release: 'release', slash: 'slash', claim: 'claim' } as const;

/** The vault era's accrued rewards are kept × this (10⁴ × 10⁴ × a year of seconds), like the pool's. */
export const VAULT_REWARD_SCALE = 10_000n * 10_000n * 31_536_000n;

/** A slash's `raw_tx` named its open transfer as `transfer:<id>` in that era too. */
const TRANSFER_REF = 'transfer:';

function vaultSigner(vault: ChainServices['stakingVault'], name: string) {
  return async () => {
    if (!vault?.account)
      throw new ApiError('chain_unavailable', `The ${name} vault's key is not configured.`);
    return vault.account;
  };
}

async function movedToPool(): Promise<void> {
  throw new ApiError('moved_to_pool');
}

/** The three handlers, to register on the outbox. */
export function legacyTransfers(services: ChainServices, clock: Clock): Record<string, TransferHandler> {
  const release: TransferHandler = {
    signer: vaultSigner(services.stakingVault, 'staking'),
    precheck: movedToPool,
    async progress(trx, transfer) {
      await trx
        .updateTable('unbondings')
        .set({ tx_hash: transfer.tx_hash })
        .where('id', '=', transfer.ref)
        .execute();
    },
    async settle(trx, transfer, outcome) {
      const mined = outcome === 'mined';
      const ended = await trx
        .updateTable('unbondings')
        .set(
          mined
            ? { status: UNBONDING_STATUS.released, tx_hash: transfer.tx_hash }
            : { status: UNBONDING_STATUS.unbonding, tx_hash: null },
        )
        .where('id', '=', transfer.ref)
        .where('status', '=', UNBONDING_STATUS.releasing)
        .returning(['user_id', 'amount_wei'])
        .executeTakeFirst();
      if (!mined || !ended) return;
      await trx
        .insertInto('stake_events')
        .values({
          id: randomUUID(),
          user_id: ended.user_id,
          kind: 'release',
          amount_wei: ended.amount_wei,
          tx_hash: transfer.tx_hash,
          created_at: clock.now(),
        })
        .execute();
    },
  };
  const slash: TransferHandler = {
    signer: vaultSigner(services.stakingVault, 'staking'),
    precheck: movedToPool,
    async progress(trx, transfer, status) {
      if (status !== 'signed') return;
      await trx
        .updateTable('slashes')
        .set({ status: SLASH_STATUS.signed, tx_hash: transfer.tx_hash, updated_at: clock.now() })
        .where('id', '=', transfer.ref)
        .where('raw_tx', '=', `${TRANSFER_REF}${transfer.id}`)
        .execute();
    },
    async settle(trx, transfer, outcome) {
      const mined = outcome === 'mined';
      // Not mined: the slash stays signing with no transfer, its stake event written — the
      // migration's `slash` step moves its tokens to the pool's rewards (executeSlashes leaves it).
      const ended = await trx
        .updateTable('slashes')
        .set(
          mined
            ? { status: SLASH_STATUS.sent, tx_hash: transfer.tx_hash, raw_tx: null, updated_at: clock.now() }
            : { status: SLASH_STATUS.signing, tx_hash: null, raw_tx: null, updated_at: clock.now() },
        )
        .where('id', '=', transfer.ref)
        .where('raw_tx', '=', `${TRANSFER_REF}${transfer.id}`)
        .returning('stake_event_id')
        .executeTakeFirst();
      if (mined && ended?.stake_event_id) {
        await trx
          .updateTable('stake_events')
          .set({ tx_hash: transfer.tx_hash })
          .where('id', '=', ended.stake_event_id)
          .execute();
      }
    },
  };
  const claim: TransferHandler = {
    signer: vaultSigner(services.rewardsVault, 'rewards'),
    async progress(trx, transfer, status) {
      if (status !== 'broadcast') return;
      await trx
        .updateTable('reward_payouts')
        .set({ tx_hash: transfer.tx_hash })
        .where('id', '=', transfer.ref)
        .execute();
    },
    async settle(trx, transfer, outcome) {
      const mined = outcome === 'mined';
      const payout = await trx
        .updateTable('reward_payouts')
        .set({
          status: mined ? PAYOUT_STATUS.paid : PAYOUT_STATUS.failed,
          tx_hash: mined ? transfer.tx_hash : null,
        })
        .where('id', '=', transfer.ref)
        .where('status', '=', PAYOUT_STATUS.pending)
        .returning(['user_id', 'amount_wei'])
        .executeTakeFirst();
      if (!payout) return;
      if (mined) {
        await trx
          .insertInto('stake_events')
          .values({
            id: randomUUID(),
            user_id: payout.user_id,
            kind: 'claim',
            amount_wei: payout.amount_wei,
            tx_hash: transfer.tx_hash,
            created_at: clock.now(),
          })
          .execute();
        return;
      }
      // Never paid: back to the owner's accrued rewards, which the migration pays.
      const stake = await trx
        .selectFrom('stakes')
        .select('accrued_scaled')
        .where('user_id', '=', payout.user_id)
        .executeTakeFirst();
      if (!stake) return;
      const accrued = BigInt(stake.accrued_scaled) + BigInt(payout.amount_wei) * VAULT_REWARD_SCALE;
      await trx
        .updateTable('stakes')
        .set({ accrued_scaled: accrued.toString() })
        .where('user_id', '=', payout.user_id)
        .execute();
    },
  };
  return {
    [LEGACY_PURPOSES.release]: release,
    [LEGACY_PURPOSES.slash]: slash,
    [LEGACY_PURPOSES.claim]: claim,
  };
}
