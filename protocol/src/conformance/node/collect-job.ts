import { PROTOCOL_ERRORS, type ProtocolErrorCode } from '../../errors.js';
import type { Manifest, ModelOffer } from '../../manifest.js';
import type { ChunkFrame, ErrorFrame, Frame, PresenceFrame, ResultFrame } from '../../messages.js';
import type { ModelFamily } from '../../scopes.js';
import { ConformanceFailure, ConformanceSkip, check } from '../failure.js';
import type { FrameSocket } from '../frame-socket.js';

export type JobOutcome = {
  chunks: ChunkFrame[];
  result?: ResultFrame;
  error?: ErrorFrame;
  /** Presence frames that arrived while the job ran, in order. */
  presence: PresenceFrame[];
};

/**
 * Reads the node's frames for job `jobId` until its result or error. Chunks must count up from 0;
 * frames for another job fail the scenario. `onChunk` may act mid-stream (the cancel scenario).
 */
export async function collectJob(
  socket: FrameSocket,
  jobId: string,
  timeoutMs: number,
  onChunk?: (chunk: ChunkFrame) => void,
): Promise<JobOutcome> {
  const outcome: JobOutcome = { chunks: [], presence: [] };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const frame: Frame = await socket.expect(
      ['chunk', 'result', 'error', 'presence'],
      Math.max(1, deadline - Date.now()),
    );
    if (frame.type === 'presence') {
      outcome.presence.push(frame);
      continue;
    }
    check(frame.jobId === jobId, `${frame.type} for job ${String(frame.jobId)}, expected ${jobId}`);
    if (frame.type === 'chunk') {
      check(frame.seq === outcome.chunks.length, `chunk seq ${frame.seq}, expected ${outcome.chunks.length}`);
      outcome.chunks.push(frame);
      onChunk?.(frame);
    } else if (frame.type === 'result') {
      outcome.result = frame;
      return outcome;
    } else {
      outcome.error = frame;
      return outcome;
    }
  }
}

/** The first model of `family` in the manifest; skips the scenario when there is none. */
export function modelOf(manifest: Manifest, family: ModelFamily): ModelOffer {
  const model = manifest.models.find((m) => m.family === family);
  if (!model) throw new ConformanceSkip(`the manifest serves no ${family} model`);
  return model;
}

/** Fails unless the job ended with a result. */
export function requireResult(outcome: JobOutcome): ResultFrame {
  if (outcome.error) {
    throw new ConformanceFailure(`the job failed: ${outcome.error.code}: ${outcome.error.message}`);
  }
  check(outcome.result, 'the job ended without a result');
  return outcome.result;
}

/** The job must end with an `error` of `code`, retryable as the registry says. */
export function expectJobError(outcome: JobOutcome, code: ProtocolErrorCode): void {
  check(!outcome.result, `the job ended with a result, expected error ${code}`);
  check(outcome.error?.code === code, `the job ended with ${outcome.error?.code}, expected ${code}`);
  check(
    outcome.error.retryable === PROTOCOL_ERRORS[code].retryable,
    `${code} with retryable ${outcome.error.retryable}, expected ${PROTOCOL_ERRORS[code].retryable}`,
  );
}

/** The peer must close with `code` (an error frame before the close, if any, must carry `errorCode`). */
export async function expectProtocolClose(
  socket: FrameSocket,
  errorCode: ProtocolErrorCode,
  timeoutMs: number,
  alsoAccepted: readonly number[] = [],
): Promise<void> {
  const closeCode = PROTOCOL_ERRORS[errorCode].closeCode;
  const { code, frames } = await socket.expectClose(timeoutMs);
  check(
    code === closeCode || alsoAccepted.includes(code),
    `closed with ${code}, expected ${closeCode} (${errorCode})`,
  );
  for (const frame of frames) {
    if (frame.type === 'error')
      check(frame.code === errorCode, `error frame ${frame.code}, expected ${errorCode}`);
  }
}
