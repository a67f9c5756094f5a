/**
 * A request's money, through the Ledger only: the worst case held before the job leaves (and the
 * key's limit), released when no node answers, and the bill settled after. What each costs is
 * pricing/price.ts's; this file moves it.
 */

import { providerAccountId } from '../db/tables/ledger.js';
import type { UsageStatus } from '../db/tables/usage.js';
import { ApiError } from '../errors.js';
import { nanoToUsd } from '../ledger/money.js';
import type { SettleOutcome } from '../ledger/types.js';
import { type Bill, priceHold, pricesOf } from '../pricing/price.js';
import type { Entry } from './pick-index.js';
import type { InferenceJob, RouteDeps } from './types.js';

/**
 * Settlements run after the answer is sent (the charge is known before it commits); past this many
 * ledger operations waiting to commit, a request waits for its own settlement before answering, so
 * a backlog can't grow without bound.
 */
export const MAX_LEDGER_BACKLOG = 512;

/** An attempt's worst case, held: the user's reservation, and the key's admission under its limit. */
export type Hold = { reservationId: string; amountNano: bigint; keyHold: { done(): void } | undefined };

/**
 * Holds the attempt's worst case on the user's balance (and the key's limit); 402 if it can't. A
 * part continuing an answer holds no prompt: the client's prompt was billed with the first part.
 */
export async function holdWorstCase(deps: RouteDeps, job: InferenceJob, entry: Entry): Promise<Hold> {
  const amountNano = priceHold({
    prices: pricesOf(entry, job.kind),
    promptTokensBound: job.promptTokensBound,
    completionTokensBound: job.maxTokens * job.choices,
    continuation: job.continuation !== undefined,
    feeBps: deps.settings.platformFeeBps,
  });
  const keyHold =
    job.keyId !== null && job.keyLimitNano !== null
      ? await deps.keyLimits.admit(job.keyId, job.keyLimitNano, amountNano)
      : undefined;
  const hold = await deps.ledger.reserve({ userId: job.userId, amountNano });
  if (!hold.ok) {
    keyHold?.done();
    throw new ApiError(
      'insufficient_credits',
      `This request may cost up to $${nanoToUsd(amountNano)}; the available balance is lower.`,
    );
  }
  return { reservationId: hold.reservationId, amountNano, keyHold };
}

/** Gives the hold back whole: nothing is billed. */
export async function releaseHold(deps: RouteDeps, hold: Hold): Promise<void> {
  await deps.ledger.release(hold.reservationId);
  hold.keyHold?.done();
}

/**
 * Settles an attempt's bill (priced by pricing/price.ts's priceBill, capped at the hold as the
 * settlement caps it): the settlement — charge, release of the rest, provider credit, usage row, in
 * one transaction — is queued on the ledger. The answer need not wait for its commit: ledger reads
 * wait for queued operations, so the client still reads its own usage and balance. Only when the
 * ledger is backed up does the request wait for its own settlement.
 */
export async function bill(
  deps: RouteDeps,
  job: InferenceJob,
  entry: Entry,
  hold: Hold,
  priced: Bill,
  status: UsageStatus,
  finishReason: string | null,
  /** The id the node knew the job by (OpenRouter's `upstream_id`), when it was dispatched. */
  upstreamId?: string,
): Promise<{ chargedNano: bigint; settlement: Promise<SettleOutcome> }> {
  const { promptTokens, completionTokens, chargedNano } = priced;
  const settlement = deps.ledger
    .settle({
      reservationId: hold.reservationId,
      providerNano: priced.providerNano,
      feeNano: priced.feeNano,
      providerAccountId: providerAccountId(entry.node.owner ?? entry.node.nodeId),
      usage: {
        requestId: job.requestId,
        userId: job.userId,
        keyId: job.keyId,
        model: job.model,
        nodeId: entry.node.nodeId,
        kind: job.kind,
        promptTokens,
        completionTokens,
        ...(priced.cachedTokens > 0
          ? { cachedTokens: priced.cachedTokens, cacheDiscountNano: priced.cacheDiscountNano }
          : {}),
        status,
        now: deps.clock.now(),
        latencyMs: Math.round(performance.now() - job.startedAt),
        ...(job.firstTokenMs !== undefined ? { ttftMs: job.firstTokenMs } : {}),
        finishReason,
        streamed: job.stream,
        ...(job.origin ? { origin: job.origin } : {}),
        ...(upstreamId ? { upstreamId } : {}),
      },
    })
    .then((settled) => {
      // settle returns null only for a hold no longer held: settled twice (impossible for a fresh
      // hold), or, with the SQLite writer thread, refused by the database after it was admitted.
      if (!settled) throw new Error('the reservation was not held');
      deps.metrics?.tokens.inc({ model: job.model, kind: 'prompt' }, promptTokens);
      deps.metrics?.tokens.inc({ model: job.model, kind: 'completion' }, completionTokens);
      deps.metrics?.creditsSpentNano.inc({ model: job.model }, Number(settled.chargedNano));
      return settled;
    });
  // A settlement that fails after the answer left: the hold stays in ledger_reservations for an
  // operator (the same state a crash between the node's answer and the commit leaves).
  settlement.then(
    () => hold.keyHold?.done(),
    (error: unknown) =>
      deps.log?.error(
        { err: error, requestId: job.requestId, reservationId: hold.reservationId },
        'settlement failed',
      ),
  );
  if (deps.ledger.pending > MAX_LEDGER_BACKLOG) await settlement;
  return { chargedNano, settlement };
}
