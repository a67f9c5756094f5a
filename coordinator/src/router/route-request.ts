/**
 * One paid inference request, end to end (design.md "Data flow of one paid request"): find the
 * model → pick candidates (pick-index.ts) → hold the worst case (ledger/charges.ts, the Ledger) →
 * job to the node through the router (router.ts: the hub's session, or a peer replica) → relay →
 * settle the actual cost, release the rest, credit the provider, record usage (one transaction) →
 * answer.
 * A failure before the first token releases the hold and fails over to the next candidate, so the
 * user never pays twice; a stream cut after its first token bills exactly what was delivered.
 */

import { chunkTokens } from '@gpumesh/protocol';
import { ApiError } from '../errors.js';
import type { JobError, JobUsage } from '../hub/jobs.js';
import { type BoundedUsage, boundUsage, completionBound, outputBytes } from '../ledger/bound-usage.js';
import { claimedUnits, isVoiceKind } from '../ledger/media-units.js';
import { nanoToUsd } from '../ledger/money.js';
import { deliveredText, streamedText } from '../trust/delivered-text.js';
import { recordUsageViolation } from '../usage/record-usage-violation.js';
import { USAGE_STATUS } from '../usage/tables.js';
import { finishChunk, responseAsChunk, usageChunk, withoutFinish } from '../v1/chunks.js';
import { bill, type Hold, holdWorstCase, releaseHold } from './billing.js';
import { failsOver, mapJobError } from './job-errors.js';
import type { Entry } from './pick-index.js';
import { pickOrWait, stayedAtCapacity } from './pick-or-wait.js';
import type { Slot } from './router.js';
import type { InferenceJob, InferenceResult, RouteDeps, RouterSettings, StreamSink } from './types.js';

/**
 * How long a node may take before its first sign of work — a streamed job's first chunk, a
 * non-streamed job's result — before the attempt is cancelled and fails over (a black-hole node
 * costs one deadline, not a job timeout per attempt): `ttftMs` plus the prompt's prefill at
 * `prefillMsPerToken` per token of its bound; a non-streamed job also gets every token it may
 * produce at `minTokensPerSecond`. Never past the job timeout.
 */
export function firstSignDeadlineMs(settings: RouterSettings, job: InferenceJob): number {
  let ms = settings.ttftMs + job.promptTokensBound * settings.prefillMsPerToken;
  if (!job.stream) ms += (job.maxTokens * job.choices * 1000) / settings.minTokensPerSecond;
  return Math.min(Math.ceil(ms), settings.jobTimeoutMs);
}

type AttemptOutcome =
  | {
      type: 'result';
      response: Record<string, unknown> & { usage: JobUsage };
      deliveredChunks: number;
      /** UTF-8 bytes of output the streamed chunks carried (see outputBytes). */
      deliveredBytes: number;
    }
  | { type: 'lost' }
  | {
      type: 'failed';
      error: JobError;
      deliveredChunks: number;
      deliveredTokens: number;
      deliveredBytes: number;
      clientGone: boolean;
    };

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
  let lastError: JobError | undefined;
  let hedging = false;
  let answered = false;
  const giveUp = (): never => {
    if (lastError) throw mapJobError(lastError, job.kind);
    throw new ApiError('no_provider_available', `No provider for "${job.model}" is connected now.`, {
      retryAfterS: 1,
    });
  };
  try {
    for (;;) {
      const canStart = tried.size < deps.settings.maxAttempts && !race.decided;
      if (canStart && running.size < (hedging ? MAX_PARALLEL_ATTEMPTS : 1)) {
        // Alone, an attempt waits for a slot (in the queue) as long as the request may wait; a
        // hedge takes a free slot now or none.
        const alone = running.size === 0;
        const started = await startAttempt(deps, job, sink, race, tried, { deadline, wait: alone }).catch(
          (error: unknown) => {
            if (!alone) return undefined; // no hedge (no credits for two, a pick error): go on alone
            // Every node left was excluded (tried, refused): the last node's error explains best.
            if (lastError && error instanceof ApiError && error.code === 'no_provider_available') giveUp();
            throw error;
          },
        );
        if (started) running.add(started);
        else if (alone) giveUp();
        // Once, when a node first has the job (held and paid for: unfunded floods don't count).
        if (started && tried.size === 1 && (job.kind === 'chat' || job.kind === 'completion'))
          deps.noteTraffic?.(job.model, job.kind, job.nodeRequest, job.stream);
        else hedging = false;
        continue;
      }
      if (running.size === 0) giveUp();
      const [only] = running.size === 1 ? running : [];
      const next = await nextEvent(running, canStart && !hedging ? only?.hedgeAt : undefined);
      if (next.type === 'hedge') {
        only!.hedgeAt = undefined;
        hedging = true;
        continue;
      }
      const { attempt, outcome } = next;
      running.delete(attempt);
      if (outcome.type === 'lost' || (race.decided && !attempt.won())) {
        await endUnbilled(deps, attempt);
        continue;
      }
      if (outcome.type === 'result' || outcome.deliveredChunks > 0) {
        answered = true;
        return await settleOutcome(deps, job, attempt, outcome, sink);
      }
      if (outcome.clientGone) {
        // The client left before any answer: one attempt's prompt is billed, the hedge's is not.
        answered = true;
        return await settleOutcome(deps, job, attempt, outcome, sink);
      }
      // Failed before its first sign, the client still there: nothing billed, try another node.
      await endUnbilled(deps, attempt);
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
      const end = () => endUnbilled(deps, attempt);
      attempt.outcome
        .then(end, end)
        .catch((err: unknown) =>
          deps.log?.error({ err, requestId: job.requestId }, 'releasing a hedge failed'),
        );
    }
  }
}

/** What happens next among the running attempts: one ends, or it is time to hedge. */
function nextEvent(
  running: ReadonlySet<Attempt>,
  hedgeAt: number | undefined,
): Promise<{ type: 'hedge' } | { type: 'ended'; attempt: Attempt; outcome: AttemptOutcome }> {
  const ended = [...running].map((attempt) =>
    attempt.outcome.then((outcome) => ({ type: 'ended' as const, attempt, outcome })),
  );
  if (hedgeAt === undefined) return Promise.race(ended);
  let timer: NodeJS.Timeout | undefined;
  const hedge = new Promise<{ type: 'hedge' }>((resolve) => {
    timer = setTimeout(() => resolve({ type: 'hedge' }), Math.max(0, hedgeAt - performance.now()));
  });
  return Promise.race([...ended, hedge]).finally(() => clearTimeout(timer));
}

/**
 * Starts an attempt on the best candidate not yet tried that has a free slot: holds its worst case
 * (402 when the balance can't cover it), then claims the slot. Candidates that filled up between
 * the pick and the claim (other requests took the last slots while this one awaited its hold) send
 * it back to the queue, at the head of its client's line. Undefined when no candidate could be
 * reached (or, with `wait: false`, none is free now).
 */
async function startAttempt(
  deps: RouteDeps,
  job: InferenceJob,
  sink: StreamSink | undefined,
  race: Race,
  tried: Set<string>,
  options: { deadline: number; wait: boolean },
): Promise<Attempt | undefined> {
  for (let front = false; ; front = true) {
    if (front && performance.now() >= options.deadline) throw stayedAtCapacity(job.model);
    const picked = await pickOrWait(deps, job, tried, { ...options, front });
    const candidates = deps.probation ? deps.probation.order(job.model, picked) : picked;
    let full = false;
    for (const entry of candidates) {
      if (!deps.router.index.hasRoom(entry)) {
        full = true;
        continue;
      }
      if (!deps.router.reachable(entry)) continue;
      const hold = await holdWorstCase(deps, job, entry);
      // The slot is taken only now, checked and taken in one step: requests that picked the node at
      // once and then awaited their holds can't send it more jobs than its slots.
      const slot = deps.router.claim(entry);
      if (!slot) {
        full = true;
        await releaseHold(deps, hold);
        continue;
      }
      tried.add(entry.node.nodeId);
      deps.probation?.note(job.model, entry.node.nodeId);
      return runAttempt(deps, slot, hold, job, race, sink);
    }
    if (!full || !options.wait) return undefined;
  }
}

/** An attempt that ends without a bill: its hold released, its slot given back. Idempotent. */
async function endUnbilled(deps: RouteDeps, attempt: Attempt): Promise<void> {
  attempt.slot.release();
  if (attempt.settled) return;
  attempt.settled = true;
  await releaseHold(deps, attempt.hold);
}

/** Which attempt of a request answers: the first to show a sign of work (race.winner). */
class Race {
  winner: object | undefined;
  get decided(): boolean {
    return this.winner !== undefined;
  }
}

/** One attempt of a request on one node: its slot, its hold, and how it ends. */
type Attempt = {
  readonly entry: Entry;
  readonly slot: Slot;
  readonly hold: Hold;
  readonly outcome: Promise<AttemptOutcome>;
  /** performance.now() at which a hedge starts beside it, if it shows no sign by then. */
  hedgeAt: number | undefined;
  /** True once its hold was settled or released. */
  settled: boolean;
  /** Whether it answers the request (showed the first sign). */
  won(): boolean;
  cancel(reason: string): void;
};

/**
 * Sends the job on a claimed slot. The attempt resolves its outcome once: a result; a failure
 * (with what it delivered); `lost` when another attempt of the request showed a sign first (this
 * one is then cancelled); or a job_timeout failure when it shows no sign within its first-sign
 * deadline (cancelled and counted as a miss against the node). Only the winner writes to `sink`.
 */
function runAttempt(
  deps: RouteDeps,
  slot: Slot,
  hold: Hold,
  job: InferenceJob,
  race: Race,
  sink: StreamSink | undefined,
): Attempt {
  const { entry } = slot;
  const me = {};
  const deadlineMs = firstSignDeadlineMs(deps.settings, job);
  let cancel: (reason: string) => void = () => {};
  const outcome = new Promise<AttemptOutcome>((resolve) => {
    let deliveredChunks = 0;
    /** What the client got of a stream, kept only for a spot check. */
    const relayedChunks: Record<string, unknown>[] = [];
    let deliveredTokens = 0;
    let deliveredBytes = 0;
    let clientGone = false;
    let done = false;
    let firstSign = false;
    const noFirstSign = setTimeout(() => {
      if (done || firstSign) return;
      done = true;
      handle.cancel('no first token in time');
      deps.router.noteMiss(entry);
      const error: JobError = {
        code: 'job_timeout',
        message: `The node gave no first token within ${deadlineMs} ms.`,
        retryable: true,
      };
      resolve({
        type: 'failed',
        error,
        deliveredChunks: 0,
        deliveredTokens: 0,
        deliveredBytes: 0,
        clientGone,
      });
    }, deadlineMs);
    /** A sign of work: the first makes this attempt the winner unless another was first. */
    const mayAnswer = (): boolean => {
      if (!firstSign) {
        firstSign = true;
        clearTimeout(noFirstSign);
        race.winner ??= me;
        if (race.winner === me) job.firstTokenMs ??= Math.round(performance.now() - job.startedAt);
      }
      if (race.winner === me) return true;
      if (!done) {
        done = true;
        handle.cancel('another node answered first');
        resolve({ type: 'lost' });
      }
      return false;
    };
    const handle = deps.router.dispatch(
      slot,
      {
        kind: job.kind,
        model: job.model,
        request: job.nodeRequest,
        stream: job.stream,
        timeoutMs: deps.settings.jobTimeoutMs,
      },
      {
        onChunk: (chunk, _seq, tokens) => {
          if (!mayAnswer() || done || !sink || sink.closed) return;
          // The stream's end (finish reason, usage) is the coordinator's to send, once.
          const relayed = withoutFinish(chunk);
          deliveredTokens += chunkTokens(chunk, tokens);
          deliveredBytes += outputBytes(chunk);
          if (!relayed) return;
          if (deps.spotCheck) relayedChunks.push(relayed);
          if (deliveredChunks === 0) sink.start(entry.node.nodeId);
          sink.write({ ...relayed, id: job.requestId, model: job.model });
          deliveredChunks++;
        },
        onResult: (response, tokenIds) => {
          if (!mayAnswer() || done) return;
          done = true;
          // Read only when a spot check is drawn: the text of a stream is assembled then.
          deps.spotCheck?.(entry, () => ({
            kind: job.kind,
            jobId: handle.jobId,
            request: job.nodeRequest,
            usage: response.usage,
            tokenIds,
            delivered: deliveredChunks > 0 ? streamedText(relayedChunks) : deliveredText(response),
            private: job.provider?.dataCollection === 'deny',
          }));
          if (sink && !sink.closed && deliveredChunks === 0) {
            // The node answered a stream request in one piece: stream it as one chunk.
            sink.start(entry.node.nodeId);
            sink.write(responseAsChunk(job, response));
          }
          resolve({ type: 'result', response, deliveredChunks, deliveredBytes });
        },
        onError: (error) => {
          clearTimeout(noFirstSign);
          if (done) return;
          done = true;
          // A winner that failed before delivering anything leaves the answer to another node.
          if (race.winner === me && deliveredChunks === 0) race.winner = undefined;
          resolve({ type: 'failed', error, deliveredChunks, deliveredTokens, deliveredBytes, clientGone });
        },
      },
    );
    cancel = (reason) => {
      if (!done) handle.cancel(reason);
    };
    (sink ?? job.client)?.onClose(() => {
      if (done) return;
      clientGone = true;
      handle.cancel('client disconnected');
    });
  });
  return {
    entry,
    slot,
    hold,
    outcome,
    hedgeAt: performance.now() + deadlineMs / 2,
    settled: false,
    won: () => race.winner === me,
    cancel: (reason) => cancel(reason),
  };
}

/**
 * Bills the attempt that answered: a result at the node's usage, bounded by what the coordinator
 * saw (ledger/bound-usage.ts); a job cut short after the node had it (the client left, or the node
 * died after its first token) at its prompt — the node's count if its error frame carried one,
 * else the coordinator's bound, never above it — plus the completion tokens delivered.
 */
async function settleOutcome(
  deps: RouteDeps,
  job: InferenceJob,
  attempt: Attempt,
  outcome: Exclude<AttemptOutcome, { type: 'lost' }>,
  sink: StreamSink | undefined,
): Promise<InferenceResult> {
  const { entry, hold } = attempt;
  attempt.settled = true;
  attempt.slot.release();
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
