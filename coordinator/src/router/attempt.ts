/**
 * One attempt of a request on one node, from its claimed slot to its outcome; the race that decides
 * which attempt answers; and the wait for the next thing to happen among them (one ends, or it is
 * time to hedge).
 */
import { chunkTokens } from '@gpumesh/protocol';
import { outputBytes } from '../pricing/bound-usage.js';
import { type Hold, releaseHold } from './billing.js';
import { responseAsChunk, withoutFinish } from './chunks.js';
import { joinContinuedIds, withChunkIds } from './continued-ids.js';
import { deliveredText, streamedText } from './delivered-text.js';
import type { JobError, JobHandle, JobTokenIds, JobUsage } from './jobs.js';
import type { Entry } from './pick-index.js';
import type { Slot } from './router.js';
import type { InferenceJob, RouteDeps, RouterSettings, StreamSink } from './types.js';

/** Kinds whose stream chunks are OpenAI text chunks (held until the first that has output). */
const TEXT_KINDS: ReadonlySet<string> = new Set(['chat', 'completion', 'vision']);

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
  // A continuation's ids are replayed one at a time, at the pace they were generated.
  ms += ((job.continuation?.tokenIds?.length ?? 0) * 1000) / settings.minTokensPerSecond;
  return Math.min(Math.ceil(ms), settings.jobTimeoutMs);
}

/** How an attempt ended. */
export type AttemptOutcome =
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
      /**
       * Choice 0's text the client got from this attempt, while it was plain text (undefined once a
       * chunk carried anything else, a tool call say): what a continuation continues.
       */
      answerText?: string;
      /** The ids of `answerText`'s tokens, when every chunk carried its tokens' ids (v0.4). */
      answerTokenIds?: number[];
    };

/** Which attempt of a request answers: the first to show a sign of work. */
export class Race {
  winner: Attempt | undefined;
  get decided(): boolean {
    return this.winner !== undefined;
  }
}

/**
 * Sends the job on a claimed slot. The attempt's outcome resolves once: a result; a failure (with
 * what it delivered); `lost` when another attempt of the request showed a sign first (this one is
 * then cancelled); or a job_timeout failure when it shows no sign within its first-sign deadline
 * (cancelled and counted as a miss against the node). Only the winner writes to the sink. If the
 * router refuses to send the job, the outcome rejects with its error.
 */
export class Attempt {
  readonly entry: Entry;
  readonly hold: Hold;
  readonly outcome: Promise<AttemptOutcome>;
  /** performance.now() at which a hedge starts beside it, if it shows no sign by then. */
  hedgeAt: number | undefined;

  readonly #deps: RouteDeps;
  readonly #job: InferenceJob;
  readonly #race: Race;
  readonly #sink: StreamSink | undefined;
  readonly #slot: Slot;
  readonly #deadlineMs: number;
  readonly #noFirstSign: NodeJS.Timeout;
  #resolve: (outcome: AttemptOutcome) => void = () => {};
  #handle: JobHandle | undefined;
  /** True once the outcome is decided: later frames change nothing. */
  #done = false;
  #firstSign = false;
  #clientGone = false;
  /** True once the hold was settled or released. */
  #ended = false;
  #deliveredChunks = 0;
  #deliveredTokens = 0;
  #deliveredBytes = 0;
  /** Choice 0's text so far, kept for a stream a continuation may take over (continuation.ts). */
  #answerText: string | undefined;
  /** The ids of the tokens of the chunks relayed, while every chunk came with its ids. */
  #answerIds: number[] | undefined;
  /** What the client got of a stream, kept only for a spot check. */
  readonly #relayedChunks: Record<string, unknown>[] = [];
  /** Chunks without output (a role) waiting for the first that has some. */
  readonly #held: Record<string, unknown>[] = [];

  constructor(
    deps: RouteDeps,
    slot: Slot,
    hold: Hold,
    job: InferenceJob,
    race: Race,
    sink: StreamSink | undefined,
  ) {
    this.#deps = deps;
    this.#slot = slot;
    this.entry = slot.entry;
    this.hold = hold;
    this.#job = job;
    this.#race = race;
    this.#sink = sink;
    this.#deadlineMs = firstSignDeadlineMs(deps.settings, job);
    if (job.stream && job.choices === 1 && (job.kind === 'chat' || job.kind === 'completion')) {
      this.#answerText = '';
      this.#answerIds = [];
    }
    let reject: (error: unknown) => void = () => {};
    this.outcome = new Promise<AttemptOutcome>((resolve, rejectOutcome) => {
      this.#resolve = resolve;
      reject = rejectOutcome;
    });
    this.#noFirstSign = setTimeout(() => this.#noSignInTime(), this.#deadlineMs);
    try {
      this.#handle = deps.router.dispatch(
        slot,
        {
          kind: job.kind,
          model: job.model,
          request: job.nodeRequest,
          stream: job.stream,
          timeoutMs: deps.settings.jobTimeoutMs,
          ...(job.continuation
            ? {
                continueFrom: {
                  text: job.continuation.text,
                  ...(job.continuation.tokenIds ? { tokenIds: [...job.continuation.tokenIds] } : {}),
                },
              }
            : {}),
        },
        {
          onChunk: (chunk, _seq, tokens, tokenIds) => this.#onChunk(chunk, tokens, tokenIds),
          onResult: (response, tokenIds) => this.#onResult(response, tokenIds),
          onError: (error) => this.#onError(error),
        },
      );
      (sink ?? job.client)?.onClose(() => this.#clientLeft());
    } catch (error) {
      // Nothing was sent (the router gave the slot back): no deadline to keep, nothing to cancel.
      this.#done = true;
      clearTimeout(this.#noFirstSign);
      reject(error);
    }
    this.hedgeAt = performance.now() + this.#deadlineMs / 2;
  }

  /** The id the node knows this job by (its frames' jobId), once dispatched. */
  get jobId(): string | undefined {
    return this.#handle?.jobId;
  }

  /** Whether it answers the request (showed the first sign). */
  won(): boolean {
    return this.#race.winner === this;
  }

  cancel(reason: string): void {
    if (!this.#done) this.#handle?.cancel(reason);
  }

  /** The attempt is to be billed: its slot given back, its hold left for the bill to settle. */
  endBilled(): void {
    this.#ended = true;
    this.#slot.release();
  }

  /** The attempt ends without a bill: its slot given back, its hold released. Idempotent. */
  async endUnbilled(): Promise<void> {
    this.#slot.release();
    if (this.#ended) return;
    this.#ended = true;
    await releaseHold(this.#deps, this.hold);
  }

  #noSignInTime(): void {
    if (this.#done || this.#firstSign) return;
    this.#done = true;
    this.#handle?.cancel('no first token in time');
    this.#deps.router.noteMiss(this.entry);
    const error: JobError = {
      code: 'job_timeout',
      message: `The node gave no first token within ${this.#deadlineMs} ms.`,
      retryable: true,
    };
    this.#resolve({
      type: 'failed',
      error,
      deliveredChunks: 0,
      deliveredTokens: 0,
      deliveredBytes: 0,
      clientGone: this.#clientGone,
    });
  }

  /** A sign of work: the first makes this attempt the winner unless another was first. */
  #mayAnswer(): boolean {
    if (!this.#firstSign) {
      this.#firstSign = true;
      clearTimeout(this.#noFirstSign);
      this.#race.winner ??= this;
      if (this.won()) this.#job.firstTokenMs ??= Math.round(performance.now() - this.#job.startedAt);
    }
    if (this.won()) return true;
    if (!this.#done) {
      this.#done = true;
      this.#handle?.cancel('another node answered first');
      this.#resolve({ type: 'lost' });
    }
    return false;
  }

  #onChunk(
    chunk: Record<string, unknown>,
    tokens: number | undefined,
    tokenIds: readonly number[] | undefined,
  ): void {
    const sink = this.#sink;
    if (!this.#mayAnswer() || this.#done || !sink || sink.closed) return;
    // The stream's end (finish reason, usage) is the coordinator's to send, once.
    // A continuation's chunks go on the stream another node began: no second role.
    const continued = this.#job.continuation !== undefined;
    const finished = withoutFinish(chunk);
    const relayed = finished && continued ? withoutRole(finished) : finished;
    const counted = chunkTokens(chunk, tokens);
    this.#deliveredTokens += counted;
    this.#answerIds = withChunkIds(this.#answerIds, counted, tokenIds);
    this.#deliveredBytes += outputBytes(chunk);
    if (!relayed) return;
    if (this.#deps.spotCheck) this.#relayedChunks.push(relayed);
    this.#answerText = plainTextOf(relayed, this.#answerText);
    const out = { ...relayed, id: this.#job.requestId, model: this.#job.model };
    // Nothing goes out before the first output (a role-only chunk waits): an error the node sends
    // first — a prompt over the model's context — is then still a plain HTTP error, as OpenAI's.
    if (this.#deliveredChunks === 0 && TEXT_KINDS.has(this.#job.kind) && outputBytes(relayed) === 0) {
      if (!continued) this.#held.push(out);
      return;
    }
    if (this.#deliveredChunks === 0 && !continued) sink.start(this.entry.node.nodeId);
    for (const held of this.#held.splice(0)) sink.write(held);
    sink.write(out);
    this.#deliveredChunks++;
  }

  #onResult(
    response: Record<string, unknown> & { usage: JobUsage },
    tokenIds: JobTokenIds | undefined,
  ): void {
    if (!this.#mayAnswer() || this.#done) return;
    this.#done = true;
    const job = this.#job;
    const sink = this.#sink;
    // Read only when a spot check is drawn: the text of a stream is assembled then. A continued
    // answer is checked whole when it was continued from ids (joined: continued-ids.ts), its
    // evidence counted from this node's first token; from text, no node's ids cover it.
    const from = job.continuation?.tokenIds;
    if (!job.continuation || (from && response.usage.completion_tokens > 0))
      this.#deps.spotCheck?.(this.entry, () => {
        const delivered =
          this.#deliveredChunks > 0 ? streamedText(this.#relayedChunks) : deliveredText(response);
        const { prompt_tokens: prompt, completion_tokens: completion } = response.usage;
        const skip = from?.length ?? 0;
        return {
          kind: job.kind,
          jobId: this.#handle?.jobId ?? '',
          request: job.nodeRequest,
          usage: { prompt_tokens: prompt - skip, completion_tokens: completion + skip },
          tokenIds: from ? joinContinuedIds(from, tokenIds) : tokenIds,
          delivered:
            job.continuation && delivered !== undefined ? job.continuation.text + delivered : delivered,
          private: job.provider?.dataCollection === 'deny' || job.provider?.zdr === true,
          ...(skip > 0 ? { scoredFrom: skip } : {}),
        };
      });
    if (sink && !sink.closed && this.#deliveredChunks === 0) {
      // The node answered a stream request in one piece: stream it as one chunk (a continuation's
      // on the stream already begun, without a role).
      if (job.continuation) sink.write(withoutRole(responseAsChunk(job, response)));
      else {
        sink.start(this.entry.node.nodeId);
        sink.write(responseAsChunk(job, response));
      }
    }
    this.#resolve({
      type: 'result',
      response,
      deliveredChunks: this.#deliveredChunks,
      deliveredBytes: this.#deliveredBytes,
    });
  }

  #onError(error: JobError): void {
    clearTimeout(this.#noFirstSign);
    if (this.#done) return;
    this.#done = true;
    // A winner that failed before delivering anything leaves the answer to another node.
    if (this.won() && this.#deliveredChunks === 0) this.#race.winner = undefined;
    this.#resolve({
      type: 'failed',
      error,
      deliveredChunks: this.#deliveredChunks,
      deliveredTokens: this.#deliveredTokens,
      deliveredBytes: this.#deliveredBytes,
      clientGone: this.#clientGone,
      ...(this.#answerText !== undefined ? { answerText: this.#answerText } : {}),
      ...(this.#answerText !== undefined && this.#answerIds ? { answerTokenIds: this.#answerIds } : {}),
    });
  }

  #clientLeft(): void {
    if (this.#done) return;
    this.#clientGone = true;
    this.#handle?.cancel('client disconnected');
  }
}

/**
 * `text` with choice 0's plain text in `chunk` added; undefined (for good) when the chunk carries
 * anything but text and a role, or a choice other than 0.
 */
function plainTextOf(chunk: Record<string, unknown>, text: string | undefined): string | undefined {
  if (text === undefined || !Array.isArray(chunk.choices)) return undefined;
  let more = '';
  for (const choice of chunk.choices as { index?: unknown; text?: unknown; delta?: unknown }[]) {
    if ((choice?.index ?? 0) !== 0) return undefined;
    if (typeof choice.text === 'string') more += choice.text;
    if (choice.delta === undefined) continue;
    if (!choice.delta || typeof choice.delta !== 'object') return undefined;
    for (const [key, value] of Object.entries(choice.delta)) {
      if (key === 'content' && typeof value === 'string') more += value;
      else if (key !== 'role' && key !== 'content' && value != null) return undefined;
    }
  }
  return text + more;
}

/** A chat chunk without its deltas' `role` (a continuation's chunks follow the first node's role). */
function withoutRole(chunk: Record<string, unknown>): Record<string, unknown> {
  if (!Array.isArray(chunk.choices)) return chunk;
  return {
    ...chunk,
    choices: (chunk.choices as Record<string, unknown>[]).map((choice) => {
      const delta = choice?.delta as Record<string, unknown> | undefined;
      if (!delta || !('role' in delta)) return choice;
      const { role: _role, ...rest } = delta;
      return { ...choice, delta: rest };
    }),
  };
}

/** What happens next among the running attempts: one ends, or it is time to hedge. */
export function nextEvent(
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
