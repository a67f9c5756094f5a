/**
 * A stream whose node failed after its first chunk, finished on other nodes holding the same
 * weights (NODE_PROTOCOL.md §9 "Continuing an answer"): the client sees one uninterrupted stream;
 * each node is paid for the tokens it produced, the client pays its prompt once and every token
 * once (settle-outcome.ts).
 */
import { ApiError } from '../errors.js';
import { type Attempt, type AttemptOutcome, Race } from './attempt.js';
import { finishChunk, usageChunk } from './chunks.js';
import { type Continuation, continuationJob } from './continuation.js';
import { failsOver, mapJobError } from './job-errors.js';
import type { JobError } from './jobs.js';
import { type BilledParts, billCutPart, clientUsage, settleOutcome } from './settle-outcome.js';
import { startAttempt } from './start-attempt.js';
import type { InferenceJob, InferenceResult, RouteDeps, StreamSink } from './types.js';

/**
 * How many times one answer is continued at most: each time a node that was continuing it failed
 * after its first chunk too. Past it, the client gets the usual error event after its text.
 */
export const MAX_CONTINUATIONS = 2;

type Failed = Extract<AttemptOutcome, { type: 'failed' }>;

/**
 * Continues the answer `attempt` began and failed in (`outcome`: it delivered chunks, the client is
 * still there, canContinue said yes): bills that part to its node, then runs the rest on the next
 * node that continues answers with the same weights and was not `excluded` (the nodes that failed
 * this request) — with what is left of max_tokens — relaying its chunks on the same stream. A
 * continuation that fails before its first chunk fails over to the next such node, up to
 * `maxAttempts` nodes; one that fails after is continued in turn, up to MAX_CONTINUATIONS. When no
 * node can go on, the stream ends with the last node's error, as an uncontinued one; when nothing
 * is left of max_tokens (the node failed after its last token), it ends with finish_reason length.
 */
export async function continueStream(
  deps: RouteDeps,
  job: InferenceJob,
  attempt: Attempt,
  outcome: Failed,
  sink: StreamSink,
  excluded: Set<string>,
): Promise<InferenceResult> {
  const sha256 = attempt.entry.offer.sha256!;
  let parts: BilledParts = await billCutPart(deps, job, attempt, outcome);
  let text = outcome.answerText ?? '';
  // The ids of that text's tokens, while every node sent its chunks' ids (v0.4): the next node
  // replays them as they are, and the continued answer is the one the model would have given.
  let ids = outcome.answerTokenIds;
  let lastError: JobError = outcome.error;
  let last = attempt;
  /** Set when the node failed after its last token: nothing is left of max_tokens to continue. */
  let whole = false;
  for (let continuation = 1; continuation <= MAX_CONTINUATIONS; continuation++) {
    const next = continuationJob(
      job,
      { text, sha256, ...(ids?.length ? { tokenIds: ids } : {}) } satisfies Continuation,
      parts.completionTokens,
    );
    if (!next) {
      whole = true;
      break;
    }
    deps.metrics?.failovers.inc({ model: job.model });
    const ended = await runContinuation(deps, next, sink, excluded);
    if (ended.type === 'none') {
      lastError = ended.error ?? lastError;
      break;
    }
    const { attempt: part, outcome: partOutcome } = ended;
    last = part;
    if (partOutcome.type === 'result' || partOutcome.clientGone || continuation === MAX_CONTINUATIONS)
      return settleOutcome(deps, next, part, partOutcome, sink, parts);
    // It too failed mid-answer: bill its part, and continue from all the client has now.
    parts = await billCutPart(deps, next, part, partOutcome, parts);
    text += partOutcome.answerText ?? '';
    ids = ids && partOutcome.answerTokenIds ? [...ids, ...partOutcome.answerTokenIds] : undefined;
    lastError = partOutcome.error;
    excluded.add(part.entry.node.nodeId);
    if (partOutcome.answerText === undefined) break;
  }
  const usage = clientUsage(job, parts);
  if (!sink.closed && whole) {
    // The answer is whole (max_tokens reached): it ends as any answer cut by its length.
    sink.write(finishChunk(job, { choices: [{ index: 0, finish_reason: 'length' }] }));
    sink.finish(job.includeUsage ? usageChunk(job, {}, usage) : null);
  } else if (!sink.closed) sink.finish({ error: mapJobError(lastError, job.kind).toBody().error });
  return {
    nodeId: last.entry.node.nodeId,
    response: { usage },
    chargedNano: parts.chargedNano,
    settlement: Promise.all(parts.settlements).then((all) => all.at(-1)!),
  };
}

/**
 * One continuation: attempts on the nodes that can take it, one at a time, until one delivers a
 * chunk or answers (its outcome), or none is left (`none`, with the last failure's error).
 */
async function runContinuation(
  deps: RouteDeps,
  job: InferenceJob,
  sink: StreamSink,
  excluded: Set<string>,
): Promise<
  | { type: 'ended'; attempt: Attempt; outcome: Exclude<AttemptOutcome, { type: 'lost' }> }
  | {
      type: 'none';
      error?: JobError;
    }
> {
  const tried = new Set(excluded);
  let error: JobError | undefined;
  for (let attempts = 0; attempts < deps.settings.maxAttempts && !sink.closed; attempts++) {
    let attempt: Attempt | undefined;
    try {
      attempt = await startAttempt(deps, job, sink, new Race(), tried, {
        deadline: deps.router.queue.deadline(),
        wait: true,
      });
    } catch (cause) {
      // No node can take it (none left, all stayed busy) or the balance can't hold its worst case.
      if (!(cause instanceof ApiError)) throw cause;
      return { type: 'none', ...(error ? { error } : {}) };
    }
    if (!attempt) break;
    let outcome: AttemptOutcome;
    try {
      outcome = await attempt.outcome;
    } catch {
      // The router refused to send it (the node left between claim and send): try the next.
      await attempt.endUnbilled();
      continue;
    }
    if (outcome.type === 'lost') {
      await attempt.endUnbilled();
      continue;
    }
    if (outcome.type === 'result' || outcome.deliveredChunks > 0 || outcome.clientGone)
      return { type: 'ended', attempt, outcome };
    await attempt.endUnbilled();
    error = outcome.error;
    excluded.add(attempt.entry.node.nodeId);
    if (!failsOver(outcome.error)) break;
  }
  return { type: 'none', ...(error ? { error } : {}) };
}
