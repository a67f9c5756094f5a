/**
 * The v0.1 node scenarios that send one job (job-scenario.ts runs each): text completions, the
 * model field, embeddings' stream flag, the refusals (unknown model, invalid request, duplicate,
 * overloaded, draining), the tier's job limit, the job timeout and drain with a job running.
 */
import { NORMAL_CLOSE_CODE } from '../../constants.js';
import { createFrame } from '../../create-frame.js';
import { check } from '../failure.js';
import { checkChatCompletion, checkUsage } from '../openai.js';
import { collectJob, requireResult } from './collect-job.js';
import type { NodeScenario } from './context.js';
import {
  cancelJob,
  checkEnd,
  endOf,
  expectLeave,
  type JobScenarioSpec,
  jobScenario,
  refusedWith,
} from './job-scenario.js';

const JOBS = ['handshake', 'manifest', 'chat'] as const;

const SPECS: readonly JobScenarioSpec[] = [
  {
    name: 'completion',
    description:
      'kind completion on a chat model (§9 "Kinds"): a text_completion result with choices[].text and usage',
    needs: JOBS,
    model: 'chat',
    kind: 'completion',
    maxTokens: 8,
    after: async ({ socket, settings, job }) => {
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
    model: 'chat',
    kind: 'completion',
    stream: true,
    maxTokens: 8,
    after: async ({ socket, settings, job }) => {
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
    model: 'chat',
    kind: 'chat',
    maxTokens: 4,
    request: (body) => ({ ...body, model: 'vendor/a-catalog-name' }),
    after: async ({ socket, settings, job }) => {
      const outcome = await collectJob(socket, job.jobId, settings.jobTimeoutMs);
      checkChatCompletion(requireResult(outcome).response);
    },
  },
  {
    name: 'embedding_stream_flag',
    description: 'an embedding job with stream: true is answered with one result and no chunks',
    needs: ['handshake', 'manifest', 'embedding'],
    model: 'embedding',
    kind: 'embedding',
    stream: true,
    after: async ({ socket, settings, job }) => {
      const outcome = await collectJob(socket, job.jobId, settings.jobTimeoutMs);
      check(outcome.chunks.length === 0, 'an embedding job sent chunks');
      requireResult(outcome);
    },
  },
  {
    name: 'model_not_found',
    description: 'a job for a model the node does not serve: error model_not_found (retryable)',
    needs: ['handshake', 'manifest'],
    model: 'unserved',
    kind: 'chat',
    maxTokens: 4,
    after: refusedWith('model_not_found', 'step'),
  },
  {
    name: 'invalid_request',
    description: 'a chat job whose request has no messages: error invalid_request (not retryable)',
    needs: JOBS,
    model: 'chat',
    kind: 'chat',
    request: (_, model) => ({ model }),
    after: refusedWith('invalid_request', 'step'),
  },
  {
    name: 'duplicate_job',
    description: 'a job whose jobId is in flight: error duplicate_job; the first job runs on',
    needs: [...JOBS, 'cancel'],
    model: 'chat',
    kind: 'chat',
    stream: true,
    maxTokens: 'long',
    after: async ({ socket, settings, job }) => {
      socket.send(job);
      const first = await endOf(socket, job.jobId, settings.jobTimeoutMs);
      checkEnd(first, 'duplicate_job', 'the second job');
      const end = await cancelJob(socket, job.jobId, settings.jobTimeoutMs);
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
    model: 'chat',
    kind: 'chat',
    maxConcurrentJobs: 1,
    stream: true,
    maxTokens: 'long',
    after: async ({ socket, settings, job, another }) => {
      const second = another();
      socket.send(second);
      const end = await endOf(socket, second.jobId, settings.jobTimeoutMs);
      checkEnd(end, 'overloaded', 'the second job');
      check(end.retryable, 'overloaded must be retryable');
      await cancelJob(socket, job.jobId, settings.jobTimeoutMs);
    },
  },
  {
    name: 'tier_limit',
    description:
      'welcome.maxConcurrentJobs caps the node’s capacity: presence load.capacity ≤ it, busy at that many jobs',
    needs: [...JOBS, 'presence', 'cancel'],
    model: 'chat',
    kind: 'chat',
    maxConcurrentJobs: 1,
    stream: true,
    maxTokens: 'long',
    after: async ({ socket, settings, job, presence }) => {
      check(presence.load.capacity <= 1, `capacity ${presence.load.capacity} with maxConcurrentJobs 1`);
      const busy = await socket.expect('presence', settings.stepTimeoutMs, ['pong', 'chunk']);
      check(
        busy.status === 'busy',
        `presence ${busy.status} at ${busy.load.inFlight}/${busy.load.capacity}, expected busy`,
      );
      await cancelJob(socket, job.jobId, settings.jobTimeoutMs);
    },
  },
  {
    name: 'job_timeout',
    description: 'a job with timeoutMs 1 that cannot finish in time ends with error job_timeout',
    needs: JOBS,
    model: 'chat',
    kind: 'chat',
    stream: true,
    maxTokens: 'long',
    timeoutMs: 1,
    after: async ({ socket, settings, job }) => {
      const end = await endOf(socket, job.jobId, settings.jobTimeoutMs);
      checkEnd(end, 'job_timeout', 'the job');
    },
  },
  {
    name: 'draining_refusal',
    description:
      'while draining, a new job gets error draining; the running one is cancelled at the deadline; then offline, bye, 1000',
    needs: [...JOBS, 'drain', 'cancel'],
    model: 'chat',
    kind: 'chat',
    stream: true,
    maxTokens: 'long',
    after: async ({ socket, settings, job, another }) => {
      const second = another();
      socket.send(createFrame('drain', { deadlineMs: settings.stepTimeoutMs }));
      socket.send(second);
      const refused = await endOf(socket, second.jobId, settings.stepTimeoutMs);
      checkEnd(refused, 'draining', 'a job sent while draining');
      await cancelJob(socket, job.jobId, settings.jobTimeoutMs);
      await expectLeave(socket, settings.stepTimeoutMs);
    },
  },
  {
    name: 'drain_running',
    description:
      'drain with a job running and a short deadline: the job ends (job_cancelled at the deadline) before presence offline, bye, 1000',
    needs: [...JOBS, 'drain', 'cancel'],
    model: 'chat',
    kind: 'chat',
    stream: true,
    maxTokens: 'long',
    after: async ({ socket, settings, job }) => {
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
];

/** In the order they run, before the bad-frame scenarios (NODE_PROTOCOL.md §13 lists them). */
export const JOB_SCENARIOS_V0_1: readonly NodeScenario[] = SPECS.map(jobScenario);
