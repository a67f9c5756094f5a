import {
  createFrame,
  encodeFrame,
  errorFrame,
  type Frame,
  type JobFrame,
  type ProtocolErrorCode,
} from '@gpumesh/protocol';
import { ChunkCoalescer } from './chunk-coalescer.js';
import { NODE_ERRORS, NodeError, toNodeError } from './errors.js';
import type { JobResponse, JsonObject, TokenIds } from './runtimes/runtime.js';

/** What a running job reports back while it runs. */
export type HubJobIo = {
  signal: AbortSignal;
  /** A chunk of the answer; `tokens`: completion tokens the chunk carries, if known; `tokenIds`: their ids. */
  onChunk: (chunk: JsonObject, tokens?: number, tokenIds?: number[]) => void;
  /** The prompt's token count, once known (reported if the job ends early). */
  onPromptTokens: (count: number) => void;
  /** The token ids evaluated and sampled, sent with the result for verification. */
  onTokenIds: (ids: TokenIds) => void;
};

/** Runs one job; rejects with a NodeError. */
export type HubJobRunner = (job: JobFrame, io: HubJobIo) => Promise<JobResponse>;

export type RunHubJobOptions = {
  runJob: HubJobRunner;
  /** Longest streamed text waits to share a chunk frame (ChunkCoalescer's flushMs). */
  chunkFlushMs: number;
  /** Sends a frame of this job (the caller sends it only on the session the job came on). */
  send: (frame: Frame) => void;
  /** The session's frame limit when the result is ready. */
  maxFrameBytes: () => number;
};

/** A job under way: abort it with `controller`; `done` settles once its last frame is sent. */
export type RunningHubJob = { controller: AbortController; done: Promise<void> };

/**
 * Runs `job` and answers it on the wire: chunks (coalesced), then a result or an error frame with the
 * registry's code. A job times out after its `timeoutMs`; after a cancel (abort) only the error frame
 * is sent. An error frame carries the usage so far when the prompt was evaluated (billed:
 * NODE_PROTOCOL.md §9).
 */
export function runHubJob(job: JobFrame, options: RunHubJobOptions): RunningHubJob {
  const controller = new AbortController();
  const timeout = setTimeout(() => controller.abort(new Error('timeout')), job.timeoutMs);
  let seq = 0;
  // Frames of a job are never sent after a cancel, but for its error.
  const send = (frame: Frame) => {
    if (!(controller.signal.aborted && frame.type !== 'error')) options.send(frame);
  };
  // What the job used so far, for its error frame if it ends early.
  let promptTokens: number | undefined;
  let tokenIds: TokenIds | undefined;
  let sentTokens = 0;
  const chunks = new ChunkCoalescer({
    flushMs: options.chunkFlushMs,
    send: (chunk, tokens, tokenIds) => {
      sentTokens += tokens ?? 0;
      send(
        createFrame('chunk', {
          jobId: job.jobId,
          seq: seq++,
          chunk,
          tokens,
          ...(tokenIds ? { tokenIds } : {}),
        }),
      );
    },
  });
  const done = options
    .runJob(job, {
      signal: controller.signal,
      onChunk: (chunk, tokens, tokenIds) => chunks.push(chunk, tokens, tokenIds),
      onPromptTokens: (count) => {
        promptTokens = count;
      },
      onTokenIds: (ids) => {
        tokenIds = ids;
      },
    })
    .then((response) => {
      if (controller.signal.aborted) throw new Error('aborted');
      chunks.flush();
      const result = createFrame('result', {
        jobId: job.jobId,
        response,
        ...(tokenIds ? { tokenIds } : {}),
      });
      // A result no frame can hold is never sent: the request asked for too much (NODE_PROTOCOL.md §9).
      const limit = options.maxFrameBytes();
      if (Buffer.byteLength(encodeFrame(result)) > limit) {
        throw new NodeError('invalid_request', { detail: `The response is larger than ${limit} bytes.` });
      }
      send(result);
    })
    .catch((error: unknown) => {
      // Text produced before a failure is still delivered (and billed); after a cancel, nothing.
      if (controller.signal.aborted) chunks.discard();
      else chunks.flush();
      send(jobErrorFrame(job.jobId, error, controller.signal, promptTokens, sentTokens));
    })
    .finally(() => clearTimeout(timeout));
  return { controller, done };
}

/**
 * The error frame of a job that failed (the NodeError's wire code and message), timed out or was
 * cancelled (the registry's message), with its usage if the prompt's count is known.
 */
function jobErrorFrame(
  jobId: string,
  error: unknown,
  signal: AbortSignal,
  promptTokens: number | undefined,
  sentTokens: number,
) {
  const timedOut = signal.reason instanceof Error && signal.reason.message === 'timeout';
  const nodeError: NodeError = toNodeError(error, 'runtime_error');
  const code: ProtocolErrorCode = timedOut
    ? 'job_timeout'
    : signal.aborted
      ? 'job_cancelled'
      : (NODE_ERRORS[nodeError.code].wire ?? 'internal_error');
  return errorFrame(code, {
    jobId,
    ...(timedOut || signal.aborted ? {} : { message: nodeError.message }),
    ...(promptTokens === undefined
      ? {}
      : {
          usage: {
            prompt_tokens: promptTokens,
            completion_tokens: sentTokens,
            total_tokens: promptTokens + sentTokens,
          },
        }),
  });
}
