/**
 * One paid inference request, end to end (design.md "Data flow of one paid request"): pick
 * candidates (pick-or-wait.ts) → hold the worst case (billing.ts, through the Ledger) → job to the
 * node through the router (attempt.ts; router.ts: the hub's session, or a peer replica) → relay →
 * settle the actual cost, release the rest, credit the provider, record usage (settle-outcome.ts,
 * one transaction) → answer. The route found the model first (find-model.ts).
 * A failure before the first token releases the hold and fails over to the next candidate, so the
 * user never pays twice; a stream whose node fails after its first token is continued on another
 * node with the same weights (continue-stream.ts), or, when none can, bills exactly what was
 * delivered.
 */
import { ApiError } from '../errors.js';
import { type Attempt, nextEvent, Race } from './attempt.js';
import { canContinue } from './continuation.js';
import { continueStream } from './continue-stream.js';
import { failsOver, mapJobError } from './job-errors.js';
import type { JobError } from './jobs.js';
import { settleOutcome } from './settle-outcome.js';
import { startAttempt } from './start-attempt.js';
import type { InferenceJob, InferenceResult, RouteDeps, StreamSink } from './types.js';

/** At most this many attempts of one request run at once: the first and one hedge. */
const MAX_PARALLEL_ATTEMPTS = 2;

/**
 * Runs the request. Non-streamed: resolves with the response. Streamed: writes to `sink` and
 * resolves once the stream ended (an error before the first chunk still throws, so the caller can
 * answer with a plain HTTP error).
 *
 * Hedged: when the running attempt shows no sign of work within half its first-sign deadline, the
 * next candidate starts beside it, and from then on two run at once until one answers. The first
 * to show a sign answers; any other is cancelled at its first sign and pays and earns nothing, or,
 * silent to its own deadline, is cancelled and counted as a miss against its node — so black
 * holes are demoted even when another node answered. A failure before the first sign fails over to
 * a node not yet tried; a request tries at most `maxAttempts` nodes. The user pays for one
 * attempt, always.
 */
export async function routeRequest(
  deps: RouteDeps,
  job: InferenceJob,
  sink?: StreamSink,
): Promise<InferenceResult> {
  const deadline = deps.router.queue.deadline();
  const race = new Race();
  const tried = new Set<string>();
  const running = new Set<Attempt>();
  /** Nodes that failed this request: never asked to continue it. */
  const failed = new Set<string>();
  let lastError: JobError | undefined;
  let hedging = false;
  let answered = false;
  try {
    for (;;) {
      const canStart = tried.size < deps.settings.maxAttempts && !race.decided;
      if (canStart && running.size < (hedging ? MAX_PARALLEL_ATTEMPTS : 1)) {
        // Alone, an attempt waits for a slot (in the queue) as long as the request may wait; a
        // hedge takes a free slot now or none.
        const alone = running.size === 0;
        let started: Attempt | undefined;
        try {
          started = await startAttempt(deps, job, sink, race, tried, { deadline, wait: alone });
        } catch (error) {
          if (alone) {
            // Every node left was excluded (tried, refused): the last node's error explains best.
            if (lastError && error instanceof ApiError && error.code === 'no_provider_available')
              throw mapJobError(lastError, job.kind);
            throw error;
          }
          // No hedge (no credits for two, a pick error): go on alone.
        }
        hedging = false;
        if (started) running.add(started);
        else if (alone) throw noNodeLeft(job, lastError);
        // Once, when a node first has the job (held and paid for: unfunded floods don't count);
        // never a zdr job's: not even its shape is kept.
        if (
          started &&
          tried.size === 1 &&
          (job.kind === 'chat' || job.kind === 'completion') &&
          job.provider?.zdr !== true
        )
          deps.noteTraffic?.({
            model: job.model,
            kind: job.kind,
            request: job.nodeRequest,
            stream: job.stream,
            shareable: job.provider?.dataCollection !== 'deny',
            node: started.entry.node,
            tried,
          });
        continue;
      }
      if (running.size === 0) throw noNodeLeft(job, lastError);
      const [only] = running.size === 1 ? running : [];
      const next = await nextEvent(running, canStart && !hedging ? only?.hedgeAt : undefined);
      if (next.type === 'hedge') {
        only!.hedgeAt = undefined;
        hedging = true;
        continue;
      }
      const { attempt, outcome } = next;
      running.delete(attempt);
      if (outcome.type === 'failed') failed.add(attempt.entry.node.nodeId);
      if (outcome.type === 'lost' || (race.decided && !attempt.won())) {
        await attempt.endUnbilled();
        continue;
      }
      // It answered (a result, or a stream cut after its first chunk), or the client left before
      // any answer: one attempt's prompt is billed, the hedge's is not.
      if (outcome.type === 'result' || outcome.deliveredChunks > 0 || outcome.clientGone) {
        answered = true;
        // Its node failed mid-stream: another node with the same weights goes on from its text.
        if (
          outcome.type === 'failed' &&
          !outcome.clientGone &&
          sink &&
          !sink.closed &&
          canContinue(job, attempt.entry, outcome.answerText)
        )
          return await continueStream(deps, job, attempt, outcome, sink, failed);
        return await settleOutcome(deps, job, attempt, outcome, sink);
      }
      // Failed before its first sign, the client still there: nothing billed, try another node.
      await attempt.endUnbilled();
      lastError = outcome.error;
      const refusedOption =
        outcome.error.code === 'invalid_request' && job.provider?.requireParameters === true;
      if (!failsOver(outcome.error) && !refusedOption) throw mapJobError(outcome.error, job.kind);
      deps.metrics?.failovers.inc({ model: job.model });
    }
  } finally {
    // Attempts still running when the request is answered (hedges that lost) end on their own —
    // cancelled at their first sign, or at their deadline as a miss — and then release their holds;
    // when the request failed they are cancelled now. Nothing of theirs is billed.
    for (const attempt of running) {
      if (!answered) attempt.cancel('the request ended');
      const end = () => attempt.endUnbilled();
      attempt.outcome
        .then(end, end)
        .catch((err: unknown) =>
          deps.log?.error({ err, requestId: job.requestId }, 'releasing a hedge failed'),
        );
    }
  }
}

/** The error of a request with no node left to try: the last node's, if one failed. */
function noNodeLeft(job: InferenceJob, lastError: JobError | undefined): ApiError {
  if (lastError) return mapJobError(lastError, job.kind);
  return new ApiError('no_provider_available', `No provider for "${job.model}" is connected now.`, {
    retryAfterS: 1,
  });
}
