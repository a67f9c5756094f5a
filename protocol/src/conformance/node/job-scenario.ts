import { randomUUID } from 'node:crypto';
import { NORMAL_CLOSE_CODE } from '../../constants.js';
import { createFrame } from '../../create-frame.js';
import type { ProtocolErrorCode } from '../../errors.js';
import type { ErrorFrame, JobFrame, JobKind, PresenceFrame, ResultFrame } from '../../messages.js';
import { check } from '../failure.js';
import type { FrameSocket } from '../frame-socket.js';
import { admitNode } from './admit-node.js';
import { collectJob, expectJobError, modelOf } from './collect-job.js';
import type { NodeKitSettings, NodeScenario, NodeScenarioContext } from './context.js';

/** A model id no node serves, for the model_not_found scenario. */
const UNSERVED_MODEL = 'gpumesh-conformance/no-such-model';

/** A job scenario's job, sent to a node that is admitted and reported its first presence. */
export type JobRun = NodeScenarioContext & {
  job: JobFrame;
  /** The node's first presence after manifest_ack. */
  presence: PresenceFrame;
  /** The same job again under a new jobId (a second job at once). */
  another(): JobFrame;
};

/** One scenario that sends one job: what the job is, and what must follow. */
export type JobScenarioSpec = {
  name: string;
  description: string;
  needs: readonly string[];
  /** The model the job names: the node's chat or embedding model, or one no node serves. */
  model: 'chat' | 'embedding' | 'unserved';
  kind: JobKind;
  /** welcome.maxConcurrentJobs (default: the tier's). */
  maxConcurrentJobs?: number;
  stream?: boolean;
  /** max_tokens of chat and completion jobs; 'long': the kit's cancelMaxTokens. */
  maxTokens?: number | 'long';
  /** job.timeoutMs (default: the kit's jobTimeoutMs). */
  timeoutMs?: number;
  /** The request instead of the usual `body` (chat: a message; completion: a prompt; embedding: a text). */
  request?: (
    body: Record<string, unknown>,
    model: string,
    settings: NodeKitSettings,
  ) => Record<string, unknown>;
  /** What follows once the job is sent; it fails the scenario with check(). */
  after(run: JobRun): Promise<void>;
};

/** The scenario of `spec`: admit the node, wait for its presence, send the job, then `spec.after`. */
export function jobScenario(spec: JobScenarioSpec): NodeScenario {
  const { name, description, needs } = spec;
  return {
    name,
    description,
    needs,
    run: async (context) => {
      const { socket, settings } = context;
      const { maxConcurrentJobs } = spec;
      const { manifest } = await admitNode(context, maxConcurrentJobs ? { maxConcurrentJobs } : {});
      const presence = await socket.expect('presence', settings.stepTimeoutMs);
      const model = spec.model === 'unserved' ? UNSERVED_MODEL : modelOf(manifest, spec.model).id;
      const stream = spec.stream ?? false;
      const maxTokens = spec.maxTokens === 'long' ? settings.cancelMaxTokens : spec.maxTokens;
      const body = requestFor(spec.kind, model, stream, maxTokens);
      const job = (): JobFrame =>
        createFrame('job', {
          jobId: `job-${randomUUID()}`,
          kind: spec.kind,
          model,
          request: spec.request ? spec.request(body, model, settings) : body,
          stream,
          timeoutMs: spec.timeoutMs ?? settings.jobTimeoutMs,
        });
      const first = job();
      socket.send(first);
      await spec.after({ ...context, job: first, presence, another: job });
    },
  };
}

/** A request for `model`: chat and completion ask for `maxTokens`; embedding embeds one text. */
function requestFor(
  kind: JobKind,
  model: string,
  stream: boolean,
  maxTokens: number | undefined,
): Record<string, unknown> {
  const body: Record<string, unknown> =
    kind === 'chat'
      ? { model, messages: [{ role: 'user', content: 'Count to a thousand.' }], max_tokens: maxTokens }
      : kind === 'completion'
        ? { model, prompt: 'Once upon a time', max_tokens: maxTokens }
        : { model, input: 'conformance' };
  if (kind !== 'embedding') body.stream = stream;
  return body;
}

/**
 * The job must end with error `code` (waiting up to the kit's step or job timeout) and the session
 * stay open.
 */
export function refusedWith(code: ProtocolErrorCode, within: 'step' | 'job') {
  return async ({ socket, settings, job }: JobRun): Promise<void> => {
    const timeoutMs = within === 'step' ? settings.stepTimeoutMs : settings.jobTimeoutMs;
    expectJobError(await collectJob(socket, job.jobId, timeoutMs), code);
    await expectAlive(socket, settings.stepTimeoutMs);
  };
}

/**
 * Reads frames until job `jobId` ends, ignoring other jobs' and presence frames; returns how it ended.
 * For scenarios with two jobs at once (collectJob allows one).
 */
export async function endOf(socket: FrameSocket, jobId: string, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const frame = await socket.expect(
      ['chunk', 'result', 'error', 'presence'],
      Math.max(1, deadline - Date.now()),
    );
    if (frame.type === 'presence' || frame.type === 'chunk' || frame.jobId !== jobId) continue;
    return frame;
  }
}

/** Cancels job `jobId` and waits for its end. */
export async function cancelJob(socket: FrameSocket, jobId: string, timeoutMs: number) {
  socket.send(createFrame('cancel', { jobId, reason: 'conformance' }));
  return endOf(socket, jobId, timeoutMs);
}

/** The session must still be open and in order: a ping is answered. */
export async function expectAlive(socket: FrameSocket, timeoutMs: number, ignore = ['presence'] as const) {
  socket.send(createFrame('ping', { ts: 515151 }));
  const pong = await socket.expect('pong', timeoutMs, ignore);
  check(pong.ts === 515151, `pong.ts ${pong.ts}, expected 515151`);
}

/** After the node's last job ended while draining: presence offline (draining ones allowed), bye, 1000. */
export async function expectLeave(socket: FrameSocket, timeoutMs: number): Promise<void> {
  for (;;) {
    const presence = await socket.expect('presence', timeoutMs, ['pong', 'chunk']);
    if (presence.status === 'offline') break;
    check(presence.status === 'draining', `presence ${presence.status} while draining`);
  }
  await socket.expect('bye', timeoutMs);
  const { code } = await socket.expectClose(timeoutMs);
  check(code === NORMAL_CLOSE_CODE, `closed with ${code} after bye, expected ${NORMAL_CLOSE_CODE}`);
}

/** `subject` (a job) must have ended with error `code`. */
export function checkEnd(
  end: ResultFrame | ErrorFrame,
  code: ProtocolErrorCode,
  subject: string,
): asserts end is ErrorFrame {
  check(end.type === 'error', `${subject} ended with ${end.type}, expected error ${code}`);
  check(end.code === code, `${subject} ended with ${end.code}, expected ${code}`);
}
