import {
  createFrame,
  encodeFrame,
  errorFrame,
  type Frame,
  type FrameOf,
  PROTOCOL_ERRORS,
  type ProtocolErrorCode,
} from '@gpumesh/protocol';
import type { JobError, JobHandle, JobHandlers, JobSpec, JobTokenIds, JobUsage } from '../router/jobs.js';
import type { Entry } from '../router/pick-index.js';

type RunningJob = {
  entry: Entry;
  handlers: JobHandlers;
  timer: NodeJS.Timeout;
  startedAt: number;
  firstSeen: boolean;
  nextSeq: number;
  /** Cancelled by us: waiting (at most CANCEL_ACK_WAIT_MS) for the node's last word on the job. */
  cancelling?: { reason: string };
};

/**
 * How long a cancelled job waits for the node's `job_cancelled` before it is ended anyway: that
 * frame may carry the prompt tokens the node evaluated, which is what a client who left pays
 * (NODE_PROTOCOL.md §9, "Billing a job cut short"). The node's slot stays taken meanwhile, as it is.
 */
export const CANCEL_ACK_WAIT_MS = 1_000;

/** How many ended job ids a session remembers, to tell a late frame from an unknown job. */
export const ENDED_JOBS_KEPT = 1_024;

/** What a session's jobs need from the session: its frames out, its clock, its latency figure. */
export type SessionJobsIo = {
  /** Sends a frame the session's order allows. */
  send(frame: Frame): void;
  /** Sends an encoded job frame (its order moved first). */
  sendJob(frame: string): void;
  now(): number;
  /** The node showed a sign of work this long after a job went out, ms. */
  observeLatency(ms: number): void;
};

/**
 * The jobs running on one node session (node-session.ts): each sent with its timeout, its chunks
 * relayed in sequence, ended once — by its result, its error, a cancel the node acknowledged (or
 * did not, within CANCEL_ACK_WAIT_MS), a timeout, or the session's end.
 */
export class SessionJobs {
  readonly #io: SessionJobsIo;
  readonly #jobs = new Map<string, RunningJob>();
  /**
   * Jobs of this session that ended, newest last (at most ENDED_JOBS_KEPT): a node's late frames for
   * them — its `job_cancelled` after our cancel or timeout, a chunk that crossed it — are dropped
   * quietly; `unknown_job` is only for a job id this session never sent (NODE_PROTOCOL.md §9).
   */
  readonly #endedJobs = new Set<string>();

  constructor(io: SessionJobsIo) {
    this.#io = io;
  }

  /** Sends the job and tracks it until its result, error, cancel or timeout. */
  start(jobId: string, entry: Entry, spec: JobSpec, handlers: JobHandlers): JobHandle {
    // Encoded first: a job its frame's schema refuses throws here, before anything is sent.
    const frame = encodeFrame(
      createFrame('job', {
        jobId,
        kind: spec.kind,
        // The node's own name for the model (the index may list it under the catalog's).
        model: entry.offer.nodeModelId ?? spec.model,
        request: spec.request,
        stream: spec.stream,
        timeoutMs: spec.timeoutMs,
        ...(spec.continueFrom ? { continueFrom: spec.continueFrom } : {}),
      }),
    );
    const timer = setTimeout(() => {
      this.#io.send(createFrame('cancel', { jobId, reason: 'timeout' }));
      this.finish(jobId, { error: registryError('job_timeout', 'The node did not finish in time.') });
    }, spec.timeoutMs);
    this.#jobs.set(jobId, {
      entry,
      handlers,
      timer,
      startedAt: this.#io.now(),
      firstSeen: false,
      nextSeq: 0,
    });
    this.#io.sendJob(frame);
    return {
      jobId,
      cancel: (reason: string) => {
        const job = this.#jobs.get(jobId);
        if (!job || job.cancelling) return;
        job.cancelling = { reason };
        this.#io.send(createFrame('cancel', { jobId, reason: reason.slice(0, 256) }));
        clearTimeout(job.timer);
        job.timer = setTimeout(
          () => this.finish(jobId, { error: registryError('job_cancelled', reason) }),
          CANCEL_ACK_WAIT_MS,
        );
      },
    };
  }

  /** A chunk from the node: relayed in order, or the job fails (out of sequence). */
  onChunk(frame: FrameOf<'chunk'>): void {
    const job = this.#jobs.get(frame.jobId);
    if (!job) {
      this.#unknownJob(frame.jobId);
      return;
    }
    if (job.cancelling) return; // nothing more reaches the client after a cancel
    if (frame.seq !== job.nextSeq) {
      this.finish(frame.jobId, {
        error: { code: 'provider_error', message: 'Chunks arrived out of sequence.', retryable: false },
      });
      this.#io.send(createFrame('cancel', { jobId: frame.jobId, reason: 'chunk out of sequence' }));
      return;
    }
    job.nextSeq++;
    this.#firstSign(job);
    job.handlers.onChunk?.(frame.chunk, frame.seq, frame.tokens, frame.tokenIds);
  }

  /** A chunk or result for a job not running: quiet if it ended here, else `unknown_job`. */
  #unknownJob(jobId: string): void {
    if (this.#endedJobs.has(jobId)) return;
    this.#io.send(errorFrame('unknown_job', { jobId, message: 'No such job.' }));
  }

  #firstSign(job: RunningJob): void {
    if (job.firstSeen) return;
    job.firstSeen = true;
    this.#io.observeLatency(Math.max(0.001, this.#io.now() - job.startedAt));
  }

  /** Ends a job with the node's result or an error; `fromNode`: the node sent it. */
  finish(
    jobId: string,
    outcome: { response: FrameOf<'result'>['response']; tokenIds?: JobTokenIds } | { error: JobError },
    fromNode = false,
  ): void {
    const job = this.#jobs.get(jobId);
    if (!job) {
      // A node's error for a job that is not running is never answered (§9); a chunk or result is
      // answered only when the job id was never sent in this session.
      if (fromNode && 'response' in outcome) this.#unknownJob(jobId);
      return;
    }
    this.#jobs.delete(jobId);
    this.#endedJobs.add(jobId);
    if (this.#endedJobs.size > ENDED_JOBS_KEPT)
      this.#endedJobs.delete(this.#endedJobs.values().next().value!);
    clearTimeout(job.timer);
    if (job.cancelling) {
      // The node's answer to our cancel (or a result that crossed it): the job stays cancelled,
      // with the usage the node reported, if any.
      const usage = 'response' in outcome ? outcome.response.usage : outcome.error.usage;
      job.handlers.onError(registryError('job_cancelled', job.cancelling.reason, usage));
      return;
    }
    if ('response' in outcome) {
      this.#firstSign(job);
      job.handlers.onResult(outcome.response as Parameters<JobHandlers['onResult']>[0], outcome.tokenIds);
    } else {
      job.handlers.onError(outcome.error);
    }
  }

  /** The session ended: every job still running fails with `error`. */
  endAll(error: JobError): void {
    for (const jobId of [...this.#jobs.keys()]) this.finish(jobId, { error });
  }
}

/** A job error the hub gives itself with a registry code (a timeout, a cancel), retryable as registered. */
function registryError(code: ProtocolErrorCode, message: string, usage?: JobUsage): JobError {
  const { retryable } = PROTOCOL_ERRORS[code];
  return { code, protocolCode: code, message, retryable, ...(usage ? { usage } : {}) };
}
