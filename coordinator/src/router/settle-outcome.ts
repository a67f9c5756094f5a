/**
 * The bill and the answer of the attempt that answered: its usage bounded by what the coordinator
 * saw, billed, and the response (or the stream's end) with its cost.
 */

import { USAGE_STATUS, type UsageStatus } from '../db/tables/usage.js';
import { nanoToUsd } from '../ledger/money.js';
import type { SettleOutcome } from '../ledger/types.js';
import { type BoundedUsage, boundUsage, completionBound, outputBytes } from '../pricing/bound-usage.js';
import { claimedUnits, isVoiceKind } from '../pricing/media-units.js';
import { priceBill, pricesOf } from '../pricing/price.js';
import type { Attempt, AttemptOutcome } from './attempt.js';
import { bill } from './billing.js';
import { finishChunk, usageChunk } from './chunks.js';
import { mapJobError } from './job-errors.js';
import type { Entry } from './pick-index.js';
import { recordUsageViolation } from './record-usage-violation.js';
import type { InferenceJob, InferenceResult, RouteDeps, StreamSink, UsageWithCost } from './types.js';

/** Jobs answered with OpenAI's chat or text completion object. */
const TEXT_KINDS: ReadonlySet<string> = new Set(['chat', 'completion', 'vision']);

/**
 * The parts of one answer already billed, each to the node that produced it (a stream continued
 * on other nodes, continue-stream.ts): the client's prompt (billed once, with the first part; of
 * it, the tokens billed as cached), the completion tokens and the charges so far.
 */
export type BilledParts = {
  promptTokens: number;
  cachedTokens: number;
  completionTokens: number;
  chargedNano: bigint;
  settlements: Promise<SettleOutcome>[];
};

/**
 * Bills the attempt that answered: a result at the node's usage, bounded by what the coordinator
 * saw (pricing/bound-usage.ts); a job cut short after the node had it (the client left, or the node
 * died after its first token) at its prompt — the node's count if its error frame carried one,
 * else the coordinator's bound, never above it — plus the completion tokens delivered. The answer
 * carries the cost; a stream still open gets its finish chunk (and usage chunk), or an error event.
 *
 * A part that continues an answer (`job.continuation`) bills no prompt: the client paid its prompt
 * with the first part, and the node's re-read of prompt and answer so far is not billed (nor paid).
 * `earlier` are the answer's parts billed before; the usage the client sees covers them all.
 */
export async function settleOutcome(
  deps: RouteDeps,
  job: InferenceJob,
  attempt: Attempt,
  outcome: Exclude<AttemptOutcome, { type: 'lost' }>,
  sink: StreamSink | undefined,
  earlier?: BilledParts,
): Promise<InferenceResult> {
  const { entry } = attempt;
  if (outcome.type !== 'result') {
    const parts = await billCutPart(deps, job, attempt, outcome, earlier);
    if (sink && !sink.closed) sink.finish({ error: mapJobError(outcome.error, job.kind).toBody().error });
    return {
      nodeId: entry.node.nodeId,
      response: { usage: clientUsage(job, parts) },
      chargedNano: parts.chargedNano,
      settlement: lastSettlement(parts),
    };
  }
  attempt.endBilled();
  const usage = outcome.response.usage;
  const deliveredBytes = outcome.deliveredChunks > 0 ? outcome.deliveredBytes : outputBytes(outcome.response);
  const counted = boundUsage(claimedUnits(job.kind, usage), {
    promptTokens: job.promptTokensBound,
    completionTokens:
      job.kind === 'embedding' || isVoiceKind(job.kind)
        ? 0
        : completionBound({ maxTokens: job.maxTokens, deliveredBytes, choices: job.choices }),
  });
  if (counted.clamped) reportClamp(deps, job, entry, counted);
  const parts = await billPart(deps, job, attempt, counted, {
    claimedCached: cachedClaim(usage),
    status: USAGE_STATUS.completed,
    finishReason: finishReasonOf(outcome.response),
    earlier,
  });
  const withCost = {
    ...outcome.response,
    // The generation's id is the request's (GET /api/v1/generation?id=).
    id: job.requestId,
    model: job.model,
    // OpenAI's member (null when unknown): the node's software and weights (hub/offer-fingerprint.ts).
    ...(TEXT_KINDS.has(job.kind) ? { system_fingerprint: entry.offer.fingerprint ?? null } : {}),
    usage: { ...usage, ...clientUsage(job, parts) },
  };
  if (sink && !sink.closed) {
    sink.write(finishChunk(job, outcome.response));
    sink.finish(job.includeUsage ? usageChunk(job, outcome.response, withCost.usage) : null);
  }
  return {
    nodeId: entry.node.nodeId,
    response: withCost,
    chargedNano: parts.chargedNano,
    settlement: lastSettlement(parts),
  };
}

/**
 * Bills an attempt cut short after the node had the job (the client left, or the node failed after
 * its first chunk) and adds it to the answer's parts: its prompt (none for a continuing part, see
 * settleOutcome) and the completion tokens delivered. The stream is left as it is.
 */
export async function billCutPart(
  deps: RouteDeps,
  job: InferenceJob,
  attempt: Attempt,
  outcome: Extract<AttemptOutcome, { type: 'failed' }>,
  earlier?: BilledParts,
): Promise<BilledParts> {
  const { entry } = attempt;
  attempt.endBilled();
  const { error, clientGone } = outcome;
  const status = clientGone ? USAGE_STATUS.clientDisconnected : USAGE_STATUS.nodeFailed;
  // A voice job cut short bills its input in full (the coordinator's bound: the audio's length or
  // the characters it sent), never output.
  const voice = isVoiceKind(job.kind);
  const counted = boundUsage(
    {
      promptTokens: voice ? job.promptTokensBound : (error.usage?.prompt_tokens ?? job.promptTokensBound),
      completionTokens: voice ? 0 : outcome.deliveredTokens,
    },
    {
      promptTokens: job.promptTokensBound,
      completionTokens: voice
        ? 0
        : completionBound({
            maxTokens: job.maxTokens,
            deliveredBytes: outcome.deliveredBytes,
            choices: job.choices,
          }),
    },
  );
  if (counted.clamped) reportClamp(deps, job, entry, counted);
  return billPart(deps, job, attempt, counted, {
    claimedCached: cachedClaim(error.usage),
    status,
    finishReason: null,
    earlier,
  });
}

/**
 * Prices the attempt's bounded counts (pricing/price.ts: a continuing part bills no prompt; cached
 * tokens up to what this coordinator sent the node before, sent-prefixes.ts), queues its bill, notes
 * the prompt it sent the node, and adds the part to the answer's.
 */
async function billPart(
  deps: RouteDeps,
  job: InferenceJob,
  attempt: Attempt,
  counted: BoundedUsage,
  part: { claimedCached: unknown; status: UsageStatus; finishReason: string | null; earlier?: BilledParts },
): Promise<BilledParts> {
  const { entry, hold } = attempt;
  const now = deps.clock.now();
  const keys = job.prefixKeys;
  const priced = priceBill({
    prices: pricesOf(entry, job.kind),
    counted,
    claimedCached: part.claimedCached,
    cachedBound: keys ? deps.router.sentPrefixes.bound(entry.node.nodeId, keys, now, job.userId) : 0,
    continuation: job.continuation !== undefined,
    feeBps: deps.settings.platformFeeBps,
    heldNano: hold.amountNano,
  });
  const billed = await bill(deps, job, entry, hold, priced, part.status, part.finishReason, attempt.jobId);
  // Only for the node's current session: a job ended by its disconnect is billed after the index
  // dropped the node (and the record with it), and a node that connects again holds none of it.
  if (keys && priced.promptTokens > 0 && deps.router.index.node(entry.node.nodeId) === entry.node)
    deps.router.sentPrefixes.record(entry.node.nodeId, keys, priced.promptTokens, now, job.userId);
  const { earlier } = part;
  return {
    promptTokens: (earlier?.promptTokens ?? 0) + priced.promptTokens,
    cachedTokens: (earlier?.cachedTokens ?? 0) + priced.cachedTokens,
    completionTokens: (earlier?.completionTokens ?? 0) + priced.completionTokens,
    chargedNano: (earlier?.chargedNano ?? 0n) + billed.chargedNano,
    settlements: [...(earlier?.settlements ?? []), billed.settlement],
  };
}

/**
 * The usage the client sees for the answer's parts, with its cost; text answers also say how many
 * prompt tokens were billed as cached (OpenAI's prompt_tokens_details.cached_tokens).
 */
export function clientUsage(job: InferenceJob, parts: BilledParts): UsageWithCost {
  return {
    prompt_tokens: parts.promptTokens,
    completion_tokens: parts.completionTokens,
    total_tokens: parts.promptTokens + parts.completionTokens,
    ...(TEXT_KINDS.has(job.kind) ? { prompt_tokens_details: { cached_tokens: parts.cachedTokens } } : {}),
    cost: nanoToUsd(parts.chargedNano),
  };
}

/** The cached tokens a node's usage claims (protocol v0.5's prompt_tokens_details), as sent. */
function cachedClaim(usage: unknown): unknown {
  return (usage as { prompt_tokens_details?: { cached_tokens?: unknown } } | undefined)?.prompt_tokens_details
    ?.cached_tokens;
}

/** Commits when every part's settlement did: the last part's outcome. */
function lastSettlement(parts: BilledParts): Promise<SettleOutcome> {
  if (parts.settlements.length === 1) return parts.settlements[0]!;
  return Promise.all(parts.settlements).then((all) => all.at(-1)!);
}

/**
 * A node claimed more tokens than the coordinator's bound: logged with its id and figures, counted
 * in gpumesh_usage_clamped_total and against the node (node_usage_violations, what its reputation
 * will weigh). The bill already uses the bounded counts.
 */
function reportClamp(deps: RouteDeps, job: InferenceJob, entry: Entry, counted: BoundedUsage): void {
  const { claimed, bound } = counted.clamped!;
  if (claimed.promptTokens > bound.promptTokens) deps.metrics?.usageClamped.inc({ kind: 'prompt' });
  if (claimed.completionTokens > bound.completionTokens)
    deps.metrics?.usageClamped.inc({ kind: 'completion' });
  deps.log?.warn(
    { nodeId: entry.node.nodeId, model: job.model, requestId: job.requestId, claimed, bound },
    'node usage over the bound: clamped',
  );
  recordUsageViolation(deps.db, { nodeId: entry.node.nodeId, now: deps.clock.now() }).catch((err: unknown) =>
    deps.log?.error({ err, nodeId: entry.node.nodeId }, 'recording a usage violation failed'),
  );
}

/** The first choice's finish reason in a node's response. */
function finishReasonOf(response: Record<string, unknown>): string | null {
  const choice = (response.choices as { finish_reason?: unknown }[] | undefined)?.[0];
  return typeof choice?.finish_reason === 'string' ? choice.finish_reason.slice(0, 32) : null;
}
