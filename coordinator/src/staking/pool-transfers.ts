/**
 * How calls to the staking pool ride the transfer outbox (chain/transfer-outbox.ts), with its crash
 * semantics: stake, unbond, withdraw and claim are signed by the owner's proxy wallet (the
 * position's owner in the pool), a slash by the pool's slasher. Right before signing, in the
 * wallet's queue, a stake checks what the wallet may spend and every call is simulated against the
 * pool: a call the pool would refuse is cancelled with our error code, nothing signed. When the
 * call is mined, its receipt's pool events keep the ledger's view (apply-pool-events.ts), in the
 * transaction that records the end; a slash ends `sent` with its amount. A call that can never land
 * (reverted, replaced, cancelled) changes no position; a withdraw's unbondings go back to
 * `unbonding` and a slash back to `signing` without a transfer, for the next pass (slash.ts) — after
 * a refusal before signing, not before the back-off recorded on the refused row (refusal-backoff.ts).
 */
import type { Kysely } from 'kysely';
import type { Address, Hex } from 'viem';
import type { ChainServices } from '../chain/create-chain-services.js';
import { recordRefusal } from '../chain/refusal-backoff.js';
import { spendableBalance } from '../chain/spendable-balance.js';
import type { StakingPool } from '../chain/staking-pool.js';
import type { TransferHandler } from '../chain/transfer-types.js';
import type { Clock } from '../clock.js';
import type { Database } from '../db/schema.js';
import { UNBONDING_STATUS } from '../db/tables/chain.js';
import { SLASH_STATUS } from '../db/tables/trust.js';
import { ApiError } from '../errors.js';
import type { Keyring } from '../wallets/keyring.js';
import { loadProxyAccount } from '../wallets/load-proxy-account.js';
import { applyPoolEvents } from './apply-pool-events.js';

/** Outbox purposes of the pool calls (the ref: the owner's user id; a slash's: its id). */
export const POOL_PURPOSES = {
  stake: 'pool_stake',
  unbond: 'pool_unbond',
  withdraw: 'pool_withdraw',
  claim: 'pool_claim',
  slash: 'pool_slash',
} as const;
export type PoolPurpose = (typeof POOL_PURPOSES)[keyof typeof POOL_PURPOSES];

/** A slash's `raw_tx` names its open transfer as `transfer:<id>`. */
export const TRANSFER_REF_PREFIX = 'transfer:';

export type PoolTransferDeps = {
  db: Kysely<Database>;
  services: ChainServices;
  keyring: Keyring;
  clock: Clock;
};

/** The staking pool, or chain_unavailable when none is configured. */
export function requirePool(services: ChainServices): StakingPool {
  if (!services.stakingPool) {
    throw new ApiError('chain_unavailable', 'No staking pool is configured on this coordinator.');
  }
  return services.stakingPool;
}

/** The handler of one pool purpose. */
export function poolTransfers(
  { db, services, keyring, clock }: PoolTransferDeps,
  purpose: PoolPurpose,
): TransferHandler {
  return {
    withReceipt: true,
    async signer(transfer) {
      const pool = requirePool(services);
      if (purpose !== POOL_PURPOSES.slash) return loadProxyAccount(db, keyring, transfer.ref);
      if (!pool.slasher) throw new ApiError('chain_unavailable', 'The slasher key is not configured here.');
      return pool.slasher;
    },
    async precheck(transfer, { feeWei }) {
      const pool = requirePool(services);
      const from = transfer.from_address as Address;
      const value = BigInt(transfer.value_wei);
      if (purpose !== POOL_PURPOSES.slash) {
        const spendable = await spendableBalance(db, services, {
          userId: transfer.ref,
          proxyAddress: from,
          token: 'native',
          inFlightExcept: transfer.id,
        });
        if (spendable < value + feeWei) {
          throw new ApiError(
            'insufficient_funds',
            'The proxy wallet cannot cover this amount plus gas from what backs no credit.',
            { param: 'params.1' },
          );
        }
      }
      await pool.simulate({ from, data: transfer.data as Hex, value, gas: BigInt(transfer.gas) });
    },
    async progress(trx, transfer, status) {
      if (purpose !== POOL_PURPOSES.slash || status !== 'signed') return;
      await trx
        .updateTable('slashes')
        .set({ status: SLASH_STATUS.signed, tx_hash: transfer.tx_hash, updated_at: clock.now() })
        .where('id', '=', transfer.ref)
        .where('raw_tx', '=', `${TRANSFER_REF_PREFIX}${transfer.id}`)
        .execute();
    },
    async settle(trx, transfer, outcome, receipt) {
      const pool = requirePool(services);
      const nowMs = clock.now();
      if (outcome === 'mined' && receipt) {
        const parameters = await pool.parameters();
        const applied = await applyPoolEvents(
          trx,
          { parameters, names: services.tiers, nowMs },
          pool.events(receipt.logs),
        );
        if (purpose === POOL_PURPOSES.slash) {
          const event = applied.find((a) => a.kind === 'slash');
          await trx
            .updateTable('slashes')
            .set({
              status: SLASH_STATUS.sent,
              tx_hash: transfer.tx_hash,
              raw_tx: null,
              amount_wei: (event?.amountWei ?? 0n).toString(),
              stake_event_id: event?.id ?? null,
              updated_at: nowMs,
            })
            .where('id', '=', transfer.ref)
            .where('raw_tx', '=', `${TRANSFER_REF_PREFIX}${transfer.id}`)
            .execute();
        }
      }
      if (purpose === POOL_PURPOSES.withdraw) {
        // Whatever the withdraw did not pay (it never landed, or an unbonding was not due) waits again.
        await trx
          .updateTable('unbondings')
          .set({ status: UNBONDING_STATUS.unbonding })
          .where('user_id', '=', transfer.ref)
          .where('status', '=', UNBONDING_STATUS.releasing)
          .execute();
      } else if (purpose === POOL_PURPOSES.slash && outcome !== 'mined') {
        // Refused before signing: the next call for this slash waits (an exponential back-off).
        if (outcome === 'cancelled') await recordRefusal(trx, transfer, nowMs);
        await trx
          .updateTable('slashes')
          .set({ status: SLASH_STATUS.signing, tx_hash: null, raw_tx: null, updated_at: nowMs })
          .where('id', '=', transfer.ref)
          .where('raw_tx', '=', `${TRANSFER_REF_PREFIX}${transfer.id}`)
          .execute();
      }
    },
  };
}

/** Registers the five pool purposes on an outbox. */
export function registerPoolTransfers(
  outbox: { register(purpose: string, handler: TransferHandler): unknown },
  deps: PoolTransferDeps,
): void {
  for (const purpose of Object.values(POOL_PURPOSES)) outbox.register(purpose, poolTransfers(deps, purpose));
}
