/**
 * The bill and the answer of the attempt that answered: its usage bounded by what the coordinator
 * saw, billed, and the response (or the stream's end) with its cost.
 */

import { USAGE_STATUS } from '../db/tables/usage.js';
import { type BoundedUsage, boundUsage, completionBound, outputBytes } from '../ledger/bound-usage.js';
import { claimedUnits, isVoiceKind } from '../ledger/media-units.js';
import { nanoToUsd } from '../ledger/money.js';
import type { Attempt, AttemptOutcome } from './attempt.js';
import { bill } from './billing.js';
import { finishChunk, usageChunk } from './chunks.js';
import { mapJobError } from './job-errors.js';
import type { Entry } from './pick-index.js';
import { recordUsageViolation } from './record-usage-violation.js';
import type { InferenceJob, InferenceResult, RouteDeps, StreamSink } from './types.js';

/**
 * Bills the attempt that answered: a result at the node's usage, bounded by what the coordinator
 * saw (ledger/bound-usage.ts); a job cut short after the node had it (the client left, or the node
 * died after its first token) at its prompt — the node's count if its error frame carried one,
 * else the coordinator's bound, never above it — plus the completion tokens delivered. The answer
 * carries the cost; a stream still open gets its finish chunk (and usage chunk), or an error event.
 */
export async function settleOutcome(
  deps: RouteDeps,
  job: InferenceJob,
  attempt: Attempt,
  outcome: Exclude<AttemptOutcome, { type: 'lost' }>,
  sink: StreamSink | undefined,
): Promise<InferenceResult> {
  const { entry, hold } = attempt;
  attempt.endBilled();
  if (outcome.type === 'result') {
    const usage = outcome.response.usage;
    const deliveredBytes =
      outcome.deliveredChunks > 0 ? outcome.deliveredBytes : outputBytes(outcome.response);
    const counted = boundUsage(claimedUnits(job.kind, usage), {
      promptTokens: job.promptTokensBound,
      completionTokens:
        job.kind === 'embedding' || isVoiceKind(job.kind)
          ? 0
          : completionBound({ maxTokens: job.maxTokens, deliveredBytes, choices: job.choices }),
    });
    if (counted.clamped) reportClamp(deps, job, entry, counted);
    const { promptTokens, completionTokens } = counted;
    const billed = await bill(
      deps,
      job,
      entry,
      hold,
      promptTokens,
      completionTokens,
      USAGE_STATUS.completed,
      finishReasonOf(outcome.response),
    );
    const withCost = {
      ...outcome.response,
      // The generation's id is the request's (GET /api/v1/generation?id=).
      id: job.requestId,
      model: job.model,
      usage: {
        ...usage,
        prompt_tokens: promptTokens,
        completion_tokens: completionTokens,
        total_tokens: promptTokens + completionTokens,
        cost: nanoToUsd(billed.chargedNano),
      },
    };
    if (sink && !sink.closed) {
      sink.write(finishChunk(job, outcome.response));
      sink.finish(job.includeUsage ? usageChunk(job, outcome.response, withCost.usage) : null);
    }
    return { nodeId: entry.node.nodeId, response: withCost, ...billed };
  }
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
  const { promptTokens, completionTokens: deliveredTokens } = counted;
  const billed = await bill(deps, job, entry, hold, promptTokens, deliveredTokens, status, null);
  if (sink && !sink.closed) sink.finish({ error: mapJobError(error, job.kind).toBody().error });
  const usage = {
    prompt_tokens: promptTokens,
    completion_tokens: deliveredTokens,
    total_tokens: promptTokens + deliveredTokens,
  };
  return {
    nodeId: entry.node.nodeId,
    response: { usage: { ...usage, cost: nanoToUsd(billed.chargedNano) } },
    ...billed,
  };
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
