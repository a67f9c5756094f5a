/**
 * Node scenarios added with protocol v0.1: the negative paths (refusals, bad frames, the node's own
 * heartbeat timeout) and the rules v0 left open (NODE_PROTOCOL.md, change log). Each one has a
 * reference node that breaks exactly its rule (reference-node.ts, `breaks`).
 */
import { randomUUID } from 'node:crypto';
import { MIN_MAX_FRAME_BYTES, NORMAL_CLOSE_CODE, ttlMsFor } from '../../constants.js';
import { createFrame } from '../../create-frame.js';
import type { ProtocolErrorCode } from '../../errors.js';
import type { JobFrame, JobKind } from '../../messages.js';
import { check } from '../failure.js';
import type { FrameSocket } from '../frame-socket.js';
import { checkChatCompletion, checkUsage } from '../openai.js';
import { admitNode } from './admit-node.js';
import { collectJob, expectJobError, expectProtocolClose, modelOf, requireResult } from './collect-job.js';
import type { NodeScenario, NodeScenarioContext } from './context.js';

const ADMITTED = ['handshake', 'manifest'] as const;
const JOBS = [...ADMITTED, 'chat'] as const;

/** A job frame for `model`: chat and completion ask for `maxTokens`; embedding embeds one text. */
function jobFor(
  kind: JobKind,
  model: string,
  options: { stream?: boolean; maxTokens?: number; timeoutMs: number; request?: Record<string, unknown> },
): JobFrame {
  const stream = options.stream ?? false;
  const body: Record<string, unknown> =
    kind === 'chat'
      ? {
          model,
          messages: [{ role: 'user', content: 'Count to a thousand.' }],
          max_tokens: options.maxTokens,
        }
      : kind === 'completion'
        ? { model, prompt: 'Once upon a time', max_tokens: options.maxTokens }
        : { model, input: 'conformance' };
  if (kind !== 'embedding') body.stream = stream;
  return createFrame('job', {
    jobId: `job-${randomUUID()}`,
    kind,
    model,
    request: options.request ?? body,
    stream,
    timeoutMs: options.timeoutMs,
  });
}

/** Admits the node and waits for its first presence; returns its chat model id (skips without one). */
async function readyWithChat(context: NodeScenarioContext, maxConcurrentJobs?: number) {
  const admitted = await admitNode(context, maxConcurrentJobs ? { maxConcurrentJobs } : {});
  const presence = await context.socket.expect('presence', context.settings.stepTimeoutMs);
  return { ...admitted, presence, chat: modelOf(admitted.manifest, 'chat').id };
}

/**
 * Reads frames until job `jobId` ends, ignoring other jobs' and presence frames; returns how it ended.
 * For scenarios with two jobs at once (collectJob allows one).
 */
async function endOf(socket: FrameSocket, jobId: string, timeoutMs: number) {
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

/** The session must still be open and in order: a ping is answered. */
async function expectAlive(socket: FrameSocket, timeoutMs: number, ignore = ['presence'] as const) {
  socket.send(createFrame('ping', { ts: 515151 }));
  const pong = await socket.expect('pong', timeoutMs, ignore);
  check(pong.ts === 515151, `pong.ts ${pong.ts}, expected 515151`);
}

/** Sends a raw message to a ready node and expects the close of `errorCode`. */
function badFrame(
  name: string,
  description: string,
  errorCode: ProtocolErrorCode,
  message: (socket: FrameSocket) => void,
): NodeScenario {
  return {
    name,
    description,
    needs: ADMITTED,
    run: async (context) => {
      await admitNode(context);
      await context.socket.expect('presence', context.settings.stepTimeoutMs);
      message(context.socket);
      await expectProtocolClose(context.socket, errorCode, context.settings.stepTimeoutMs);
    },
  };
}

/** The node scenarios of protocol v0.1, run after the v0 ones. */
export const NODE_SCENARIOS_V0_1: readonly NodeScenario[] = [
  {
    name: 'completion',
    description:
      'kind completion on a chat model (§9 "Kinds"): a text_completion result with choices[].text and usage',
    needs: JOBS,
    run: async (context) => {
      const { socket, settings } = context;
      const { chat } = await readyWithChat(context);
      const job = jobFor('completion', chat, { maxTokens: 8, timeoutMs: settings.jobTimeoutMs });
      socket.send(job);
      const outcome = await collectJob(socket, job.jobId, settings.jobTimeoutMs);
      check(outcome.chunks.length === 0, `${outcome.chunks.length} chunks for a stream: false job`);
      const response = requireResult(outcome).response as Record<string, unknown>;
      check(response.object === 'text_completion', `response.object ${String(response.object)}`);
      const choice = (response.choices as { text?: unknown }[] | undefined)?.[0];
      check(typeof choice?.text === 'string', 'choices[0].text is not a string');
      checkUsage(response.usage as never, true, choice.text);
    },
  },
  {
    name: 'completion_stream',
    description:
      'streamed completion: text_completion chunks with choices[0].text, the result text their concatenation',
    needs: [...JOBS, 'completion'],
    run: async (context) => {
      const { socket, settings } = context;
      const { chat } = await readyWithChat(context);
      const job = jobFor('completion', chat, {
        stream: true,
        maxTokens: 8,
        timeoutMs: settings.jobTimeoutMs,
      });
      socket.send(job);
      const outcome = await collectJob(socket, job.jobId, settings.jobTimeoutMs);
      let streamed = '';
      for (const { chunk } of outcome.chunks) {
        check(
          chunk.object === 'text_completion',
          `chunk.object ${String(chunk.object)}, expected text_completion`,
        );
        const text = (chunk.choices as { text?: unknown }[] | undefined)?.[0]?.text;
        check(typeof text === 'string', 'a chunk without choices[0].text');
        streamed += text;
      }
      const response = requireResult(outcome).response as Record<string, unknown>;
      const text = (response.choices as { text?: unknown }[] | undefined)?.[0]?.text;
      check(text === streamed, 'the result text differs from the concatenated chunk texts');
    },
  },
  {
    name: 'model_field',
    description: 'job.model names the model; a different request.model (the client’s name) is ignored',
    needs: JOBS,
    run: async (context) => {
      const { socket, settings } = context;
      const { chat } = await readyWithChat(context);
      const job = jobFor('chat', chat, { maxTokens: 4, timeoutMs: settings.jobTimeoutMs });
      job.request.model = 'vendor/a-catalog-name';
      socket.send(job);
      const outcome = await collectJob(socket, job.jobId, settings.jobTimeoutMs);
      checkChatCompletion(requireResult(outcome).response);
    },
  },
  {
    name: 'embedding_stream_flag',
    description: 'an embedding job with stream: true is answered with one result and no chunks',
    needs: [...ADMITTED, 'embedding'],
    run: async (context) => {
      const { socket, settings } = context;
      const { manifest } = await admitNode(context);
      await socket.expect('presence', settings.stepTimeoutMs);
      const job = jobFor('embedding', modelOf(manifest, 'embedding').id, {
        stream: true,
        timeoutMs: settings.jobTimeoutMs,
      });
      socket.send(job);
      const outcome = await collectJob(socket, job.jobId, settings.jobTimeoutMs);
      check(outcome.chunks.length === 0, 'an embedding job sent chunks');
      requireResult(outcome);
    },
  },
  {
    name: 'model_not_found',
    description: 'a job for a model the node does not serve: error model_not_found (retryable)',
    needs: ADMITTED,
    run: async (context) => {
      const { socket, settings } = context;
      await admitNode(context);
      await socket.expect('presence', settings.stepTimeoutMs);
      const job = jobFor('chat', 'gpumesh-conformance/no-such-model', {
        maxTokens: 4,
        timeoutMs: settings.jobTimeoutMs,
      });
      socket.send(job);
      expectJobError(await collectJob(socket, job.jobId, settings.stepTimeoutMs), 'model_not_found');
      await expectAlive(socket, settings.stepTimeoutMs);
    },
  },
  {
    name: 'invalid_request',
    description: 'a chat job whose request has no messages: error invalid_request (not retryable)',
    needs: JOBS,
    run: async (context) => {
      const { socket, settings } = context;
      const { chat } = await readyWithChat(context);
      const job = jobFor('chat', chat, { timeoutMs: settings.jobTimeoutMs, request: { model: chat } });
      socket.send(job);
      expectJobError(await collectJob(socket, job.jobId, settings.stepTimeoutMs), 'invalid_request');
      await expectAlive(socket, settings.stepTimeoutMs);
    },
  },
  {
    name: 'duplicate_job',
    description: 'a job whose jobId is in flight: error duplicate_job; the first job runs on',
    needs: [...JOBS, 'cancel'],
    run: async (context) => {
      const { socket, settings } = context;
      const { chat } = await readyWithChat(context);
      const job = jobFor('chat', chat, {
        stream: true,
        maxTokens: settings.cancelMaxTokens,
        timeoutMs: settings.jobTimeoutMs,
      });
      socket.send(job);
      socket.send(job);
      const first = await endOf(socket, job.jobId, settings.jobTimeoutMs);
      check(first.type === 'error', `the second job ended with ${first.type}, expected error duplicate_job`);
      check(
        first.code === 'duplicate_job',
        `the second job ended with ${first.code}, expected duplicate_job`,
      );
      socket.send(createFrame('cancel', { jobId: job.jobId, reason: 'conformance' }));
      const end = await endOf(socket, job.jobId, settings.jobTimeoutMs);
      check(
        end.type === 'result' || end.code === 'job_cancelled',
        `the first job ended with ${end.type === 'error' ? end.code : end.type}, expected job_cancelled`,
      );
    },
  },
  {
    name: 'overloaded',
    description: 'welcome.maxConcurrentJobs 1, two jobs at once: the second ends with error overloaded',
    needs: [...JOBS, 'cancel'],
    run: async (context) => {
      const { socket, settings } = context;
      const { chat } = await readyWithChat(context, 1);
      const long = { stream: true, maxTokens: settings.cancelMaxTokens, timeoutMs: settings.jobTimeoutMs };
      const a = jobFor('chat', chat, long);
      const b = jobFor('chat', chat, long);
      socket.send(a);
      socket.send(b);
      const end = await endOf(socket, b.jobId, settings.jobTimeoutMs);
      check(end.type === 'error', `the second job ended with ${end.type}, expected error overloaded`);
      check(end.code === 'overloaded', `the second job ended with ${end.code}, expected overloaded`);
      check(end.retryable, 'overloaded must be retryable');
      socket.send(createFrame('cancel', { jobId: a.jobId, reason: 'conformance' }));
      await endOf(socket, a.jobId, settings.jobTimeoutMs);
    },
  },
  {
    name: 'tier_limit',
    description:
      'welcome.maxConcurrentJobs caps the node’s capacity: presence load.capacity ≤ it, busy at that many jobs',
    needs: [...JOBS, 'presence', 'cancel'],
    run: async (context) => {
      const { socket, settings } = context;
      const { chat, presence } = await readyWithChat(context, 1);
      check(presence.load.capacity <= 1, `capacity ${presence.load.capacity} with maxConcurrentJobs 1`);
      const job = jobFor('chat', chat, {
        stream: true,
        maxTokens: settings.cancelMaxTokens,
        timeoutMs: settings.jobTimeoutMs,
      });
      socket.send(job);
      const busy = await socket.expect('presence', settings.stepTimeoutMs, ['pong', 'chunk']);
      check(
        busy.status === 'busy',
        `presence ${busy.status} at ${busy.load.inFlight}/${busy.load.capacity}, expected busy`,
      );
      socket.send(createFrame('cancel', { jobId: job.jobId, reason: 'conformance' }));
      await endOf(socket, job.jobId, settings.jobTimeoutMs);
    },
  },
  {
    name: 'job_timeout',
    description: 'a job with timeoutMs 1 that cannot finish in time ends with error job_timeout',
    needs: JOBS,
    run: async (context) => {
      const { socket, settings } = context;
      const { chat } = await readyWithChat(context);
      const job = jobFor('chat', chat, { stream: true, maxTokens: settings.cancelMaxTokens, timeoutMs: 1 });
      socket.send(job);
      const end = await endOf(socket, job.jobId, settings.jobTimeoutMs);
      check(end.type === 'error', `the job ended with ${end.type}, expected error job_timeout`);
      check(end.code === 'job_timeout', `the job ended with ${end.code}, expected job_timeout`);
    },
  },
  {
    name: 'draining_refusal',
    description:
      'while draining, a new job gets error draining; the running one is cancelled at the deadline; then offline, bye, 1000',
    needs: [...JOBS, 'drain', 'cancel'],
    run: async (context) => {
      const { socket, settings } = context;
      const { chat } = await readyWithChat(context);
      const long = { stream: true, maxTokens: settings.cancelMaxTokens, timeoutMs: settings.jobTimeoutMs };
      const a = jobFor('chat', chat, long);
      const b = jobFor('chat', chat, long);
      socket.send(a);
      socket.send(createFrame('drain', { deadlineMs: settings.stepTimeoutMs }));
      socket.send(b);
      const refused = await endOf(socket, b.jobId, settings.stepTimeoutMs);
      check(
        refused.type === 'error',
        `a job sent while draining ended with ${refused.type}, expected error draining`,
      );
      check(
        refused.code === 'draining',
        `a job sent while draining ended with ${refused.code}, expected draining`,
      );
      socket.send(createFrame('cancel', { jobId: a.jobId, reason: 'conformance' }));
      await endOf(socket, a.jobId, settings.jobTimeoutMs);
      await expectLeave(socket, settings.stepTimeoutMs);
    },
  },
  {
    name: 'drain_running',
    description:
      'drain with a job running and a short deadline: the job ends (job_cancelled at the deadline) before presence offline, bye, 1000',
    needs: [...JOBS, 'drain', 'cancel'],
    run: async (context) => {
      const { socket, settings } = context;
      const { chat } = await readyWithChat(context);
      const job = jobFor('chat', chat, {
        stream: true,
        maxTokens: settings.cancelMaxTokens,
        timeoutMs: settings.jobTimeoutMs,
      });
      socket.send(job);
      socket.send(createFrame('drain', { deadlineMs: 20 }));
      const deadline = Date.now() + settings.jobTimeoutMs;
      let ended = false;
      for (;;) {
        const frame = await socket.expect(
          ['chunk', 'result', 'error', 'presence', 'bye'],
          Math.max(1, deadline - Date.now()),
        );
        if (frame.type === 'result' || frame.type === 'error') {
          check(frame.jobId === job.jobId, `${frame.type} for another job`);
          check(
            frame.type === 'result' || frame.code === 'job_cancelled',
            `the job ended with ${frame.type === 'error' ? frame.code : ''}, expected job_cancelled`,
          );
          ended = true;
        }
        check(frame.type !== 'bye', 'bye before presence offline');
        if (frame.type === 'presence' && frame.status === 'offline') {
          check(ended, 'presence offline while the job had not ended');
          check(frame.load.inFlight === 0, `presence offline with ${frame.load.inFlight} jobs in flight`);
          break;
        }
      }
      await socket.expect('bye', settings.stepTimeoutMs);
      const { code } = await socket.expectClose(settings.stepTimeoutMs);
      check(code === NORMAL_CLOSE_CODE, `closed with ${code} after bye, expected ${NORMAL_CLOSE_CODE}`);
    },
  },
  badFrame('unknown_type', 'a frame of an unknown type: close 4001 (unknown_type)', 'unknown_type', (s) =>
    s.sendRaw(JSON.stringify({ v: 0, type: 'gpumesh_conformance_nope' })),
  ),
  badFrame(
    'schema_violation',
    'a ping whose ts is a string: close 4002 (schema_violation)',
    'schema_violation',
    (s) => s.sendRaw(JSON.stringify({ v: 0, type: 'ping', ts: 'soon' })),
  ),
  badFrame('binary', 'a binary WebSocket message: close 4000 (malformed_frame)', 'malformed_frame', (s) =>
    s.sendRaw(Buffer.from(JSON.stringify({ v: 0, type: 'ping', ts: 1 }))),
  ),
  badFrame(
    'wrong_version',
    'a frame with v: 1 (an integer, not the session’s version): close 4004 (unsupported_version)',
    'unsupported_version',
    (s) => s.sendRaw(JSON.stringify({ v: 1, type: 'ping', ts: 1 })),
  ),
  badFrame(
    'missing_version',
    'a known type without v (check order: type, then v): close 4002 (schema_violation)',
    'schema_violation',
    (s) => s.sendRaw(JSON.stringify({ type: 'ping', ts: 1 })),
  ),
  badFrame(
    'wrong_direction',
    'a valid frame only nodes send (result): close 4005 (out_of_order)',
    'out_of_order',
    (s) =>
      s.send(
        createFrame('result', {
          jobId: 'job-wrong-direction',
          response: { usage: { prompt_tokens: 1, completion_tokens: 0, total_tokens: 1 } },
        }),
      ),
  ),
  {
    name: 'oversized_before_welcome',
    description: 'before welcome the limit is 65,536 bytes: a larger challenge gets close 4003 (or 1009)',
    needs: ['handshake'],
    run: async ({ socket, settings }) => {
      await socket.expect('hello', settings.stepTimeoutMs, []);
      const now = Date.now();
      socket.sendRaw(
        JSON.stringify({
          ...createFrame('challenge', {
            nonce: 'ab'.repeat(16),
            issuedAt: new Date(now).toISOString(),
            expiresAt: new Date(now + 60_000).toISOString(),
            coordinatorId: 'gpumesh-conformance',
          }),
          pad: 'x'.repeat(MIN_MAX_FRAME_BYTES),
        }),
      );
      await expectProtocolClose(socket, 'frame_too_large', settings.stepTimeoutMs, [1009]);
    },
  },
  {
    name: 'node_heartbeat_timeout',
    description:
      'a coordinator silent for ttlMs (pings unanswered): the node closes 4009, any error frame before it heartbeat_timeout',
    needs: [...ADMITTED, 'heartbeat'],
    run: async (context) => {
      const { socket, settings } = context;
      socket.autoPong = false;
      await admitNode(context);
      const ttl = ttlMsFor(settings.heartbeatIntervalMs);
      await expectProtocolClose(socket, 'heartbeat_timeout', ttl * 2 + settings.stepTimeoutMs);
    },
  },
  {
    name: 'coordinator_errors',
    description:
      'an error frame with a jobId, and a session error not followed by a close: the node logs them and stays',
    needs: ADMITTED,
    run: async (context) => {
      const { socket, settings } = context;
      await admitNode(context);
      await socket.expect('presence', settings.stepTimeoutMs);
      socket.send(
        createFrame('error', {
          jobId: 'job-never-sent',
          code: 'unknown_job',
          message: 'No such job.',
          retryable: false,
        }),
      );
      socket.send(
        createFrame('error', { code: 'presence_invalid', message: 'Not an allowed move.', retryable: false }),
      );
      await expectAlive(socket, settings.stepTimeoutMs);
      check(socket.open, 'the node closed the session');
    },
  },
  {
    name: 'kind_mismatch',
    description: 'an embedding job sent to a chat model (§9 "Odd jobs"): error invalid_request',
    needs: JOBS,
    run: async (context) => {
      const { socket, settings } = context;
      const { chat } = await readyWithChat(context);
      const job = jobFor('embedding', chat, { timeoutMs: settings.jobTimeoutMs });
      socket.send(job);
      expectJobError(await collectJob(socket, job.jobId, settings.jobTimeoutMs), 'invalid_request');
      await expectAlive(socket, settings.stepTimeoutMs);
    },
  },
  {
    name: 'presence_order',
    description:
      'the presence counting a job comes before its first chunk; the one uncounting it after its result (§8)',
    needs: [...JOBS, 'chat_stream', 'presence'],
    run: async (context) => {
      const { socket, settings } = context;
      const { chat } = await readyWithChat(context);
      const job = jobFor('chat', chat, { stream: true, maxTokens: 4, timeoutMs: settings.jobTimeoutMs });
      socket.send(job);
      let counted = false;
      let ended = false;
      const deadline = Date.now() + settings.jobTimeoutMs;
      for (;;) {
        const frame = await socket.expect(
          ['chunk', 'result', 'error', 'presence'],
          Math.max(1, deadline - Date.now()),
        );
        if (frame.type === 'presence') {
          if (frame.load.inFlight >= 1) {
            check(!ended, 'a presence counting the job after its result');
            counted = true;
          } else if (counted) {
            check(ended, 'a presence with the job no longer counted before its result');
            return;
          }
          continue;
        }
        check(counted, `${frame.type} before the presence that counts the job`);
        if (frame.type !== 'chunk') ended = true;
      }
    },
  },
  {
    name: 'oversized_result',
    description:
      'an embedding job whose result cannot fit welcome.maxFrameBytes: error invalid_request, never an oversized frame',
    needs: [...ADMITTED, 'embedding'],
    run: async (context) => {
      const { socket, settings } = context;
      const { manifest } = await admitNode(context);
      await socket.expect('presence', settings.stepTimeoutMs);
      const model = modelOf(manifest, 'embedding').id;
      // Each vector takes well over 100 bytes as JSON, so this many cannot fit in maxFrameBytes.
      const input = Array.from({ length: Math.ceil(settings.maxFrameBytes / 100) }, (_, i) => `t${i}`);
      const job = jobFor('embedding', model, { timeoutMs: settings.jobTimeoutMs, request: { model, input } });
      socket.send(job);
      expectJobError(await collectJob(socket, job.jobId, settings.jobTimeoutMs), 'invalid_request');
      await expectAlive(socket, settings.stepTimeoutMs);
    },
  },
];

/** After the node's last job ended while draining: presence offline (draining ones allowed), bye, 1000. */
async function expectLeave(socket: FrameSocket, timeoutMs: number): Promise<void> {
  for (;;) {
    const presence = await socket.expect('presence', timeoutMs, ['pong', 'chunk']);
    if (presence.status === 'offline') break;
    check(presence.status === 'draining', `presence ${presence.status} while draining`);
  }
  await socket.expect('bye', timeoutMs);
  const { code } = await socket.expectClose(timeoutMs);
  check(code === NORMAL_CLOSE_CODE, `closed with ${code} after bye, expected ${NORMAL_CLOSE_CODE}`);
}
