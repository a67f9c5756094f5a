/**
 * Exponential back-off after a transfer refused before signing (the outbox simulated it and the
 * contract would revert, or the wallet cannot pay): a use that would enqueue the same call again
 * every pass waits REFUSAL_BACKOFF_BASE_MS after the first refusal, twice that after the second, …
 * up to REFUSAL_BACKOFF_MAX_MS. Recorded on the refused outbox row (`attempt`, `retry_at`), so every
 * replica and a restarted process read the same wait.
 */
import type { Kysely, Transaction } from 'kysely';
import { toBigInt } from '../db/bigint.js';
import type { Database } from '../db/schema.js';
import { TRANSFER_STATUS } from '../db/tables/chain.js';
import type { TransferRow } from './transfer-types.js';

export const REFUSAL_BACKOFF_BASE_MS = 30_000;
export const REFUSAL_BACKOFF_MAX_MS = 6 * 60 * 60_000;

/** The wait after `attempt` refusals in a row (1: the first). */
export function refusalDelayMs(attempt: number): number {
  const delay = REFUSAL_BACKOFF_BASE_MS * 2 ** Math.max(0, attempt - 1);
  return Math.min(delay, REFUSAL_BACKOFF_MAX_MS);
}

/**
 * In the transaction that records a refusal: the row's attempt (the use's refusals so far, this one
 * included) and when the use may try again.
 */
export async function recordRefusal(
  trx: Transaction<Database>,
  transfer: Pick<TransferRow, 'id' | 'purpose' | 'ref'>,
  nowMs: number,
): Promise<{ attempt: number; retryAt: number }> {
  const { refused } = await trx
    .selectFrom('chain_transfers')
    .select((eb) => eb.fn.countAll<string | number | bigint>().as('refused'))
    .where('purpose', '=', transfer.purpose)
    .where('ref', '=', transfer.ref)
    .where('status', '=', TRANSFER_STATUS.cancelled)
    .where('id', '!=', transfer.id)
    .executeTakeFirstOrThrow();
  const attempt = Number(toBigInt(refused)) + 1;
  const retryAt = nowMs + refusalDelayMs(attempt);
  await trx
    .updateTable('chain_transfers')
    .set({ attempt, retry_at: retryAt })
    .where('id', '=', transfer.id)
    .execute();
  return { attempt, retryAt };
}

/** When the use (purpose, ref) may try again after its latest refusal; undefined if it may now. */
export async function refusedUntil(
  db: Kysely<Database>,
  { purpose, ref, nowMs }: { purpose: string; ref: string; nowMs: number },
): Promise<number | undefined> {
  const row = await db
    .selectFrom('chain_transfers')
    .select('retry_at')
    .where('purpose', '=', purpose)
    .where('ref', '=', ref)
    .where('status', '=', TRANSFER_STATUS.cancelled)
    .where('retry_at', '>', nowMs)
    .orderBy('retry_at', 'desc')
    .executeTakeFirst();
  return row?.retry_at == null ? undefined : Number(toBigInt(row.retry_at));
}
