import { randomUUID } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { NORMAL_CLOSE_CODE, ttlMsFor } from '../../constants.js';
import { createFrame } from '../../create-frame.js';
import type { JobFrame, PresenceFrame } from '../../messages.js';
import { nextPresence, PRESENCE_EVENT_FOR_STATUS, type PresenceState } from '../../presence.js';
import { ConformanceFailure, check } from '../failure.js';
import { checkChatChunk, checkChatCompletion, checkEmbeddings, checkUsage } from '../openai.js';
import { admitAndSettle, admitNode, greetNode } from './admit-node.js';
import { collectJob, expectProtocolClose, modelOf, requireResult } from './collect-job.js';
import type { NodeScenario } from './context.js';
import { MEDIA_SCENARIOS } from './media-scenarios.js';
import { PREFIX_CACHE_SCENARIO } from './prefix-cache-scenario.js';
import { NODE_SCENARIOS_V0_1 } from './v0-1-scenarios.js';
import { VERIFY_SCENARIOS } from './verify-scenarios.js';

const HANDSHAKE = ['handshake'] as const;
const ADMITTED = ['handshake', 'manifest'] as const;

function chatJob(model: string, stream: boolean, maxTokens: number, timeoutMs: number): JobFrame {
  return createFrame('job', {
    jobId: `job-${randomUUID()}`,
    kind: 'chat',
    model,
    request: {
      model,
      messages: [{ role: 'user', content: 'Say hello to the conformance kit.' }],
      max_tokens: maxTokens,
      stream,
    },
    stream,
    timeoutMs,
  });
}

/** Applies a presence frame to the tracked state; fails on a move the state machine rejects. */
function applyPresence(state: PresenceState, frame: PresenceFrame): PresenceState {
  let next: PresenceState;
  try {
    next = nextPresence(state, PRESENCE_EVENT_FOR_STATUS[frame.status]);
  } catch {
    throw new ConformanceFailure(`presence ${frame.status} is not allowed after ${state}`);
  }
  const { inFlight, capacity } = frame.load;
  if (frame.status === 'online')
    check(inFlight < capacity, `online with load ${inFlight}/${capacity}: must be busy`);
  if (frame.status === 'busy')
    check(inFlight >= capacity, `busy with load ${inFlight}/${capacity}: must be online`);
  return next;
}

/** Every scenario the kit runs against a node, in order. */
export const NODE_SCENARIOS: readonly NodeScenario[] = [
  {
    name: 'handshake',
    description:
      'first frame hello; auth carries a valid EIP-191 signature of the challenge (and owner proof)',
    needs: [],
    run: async (context) => {
      await greetNode(context);
    },
  },
  {
    name: 'manifest',
    description: 'manifest right after welcome, valid, matching the session, signed by the node key',
    needs: HANDSHAKE,
    run: async (context) => {
      await admitNode(context);
    },
  },
  {
    name: 'presence',
    description:
      'presence online after manifest_ack, load reported as a job starts and ends, legal moves only',
    needs: ADMITTED,
    run: async (context) => {
      const { socket, settings } = context;
      const { manifest } = await admitNode(context);
      const first = await socket.expect('presence', settings.stepTimeoutMs);
      let state = applyPresence('connecting', first);
      check(first.status === 'online', `first presence is ${first.status}, expected online`);
      check(first.load.inFlight === 0, `first presence reports ${first.load.inFlight} jobs in flight`);

      const model = manifest.models.find((m) => m.family === 'chat') ?? modelOf(manifest, 'embedding');
      const job =
        model.family === 'chat'
          ? chatJob(model.id, false, 4, settings.jobTimeoutMs)
          : createFrame('job', {
              jobId: `job-${randomUUID()}`,
              kind: 'embedding',
              model: model.id,
              request: { model: model.id, input: 'presence' },
              stream: false,
              timeoutMs: settings.jobTimeoutMs,
            });
      socket.send(job);
      const outcome = await collectJob(socket, job.jobId, settings.jobTimeoutMs);
      requireResult(outcome);
      for (const frame of outcome.presence) state = applyPresence(state, frame);
      check(
        outcome.presence.some((p) => p.load.inFlight >= 1),
        'no presence reported the job in flight before its result',
      );
      for (;;) {
        const frame = await socket.expect('presence', settings.stepTimeoutMs);
        state = applyPresence(state, frame);
        if (frame.load.inFlight === 0) break;
      }
      check(state === 'online', `after the job the node is ${state}, expected online`);
    },
  },
  {
    name: 'heartbeat',
    description: 'ping every heartbeatIntervalMs from welcome on; the kit’s ping answered by pong',
    needs: HANDSHAKE,
    run: async (context) => {
      const { socket, settings } = context;
      // The kit times pings on its own event loop: a loaded machine delays it, and that delay is the
      // kit's, not the node's. The slowest timer the kit saw in this scenario is added to the slack.
      const kitLag = monitorEventLoopDelay({ resolution: 10 });
      kitLag.enable();
      try {
        const { welcomeAt } = await greetNode(context);
        const interval = settings.heartbeatIntervalMs;
        const ttl = ttlMsFor(interval);
        socket.send(createFrame('ping', { ts: 424242 }));
        const pong = await socket.expect('pong', ttl + 500, ['manifest', 'presence']);
        check(pong.ts === 424242, `pong.ts ${pong.ts}, expected the ping's 424242`);
        await new Promise((resolve) => setTimeout(resolve, interval * 6));
        const pings = socket.pingTimes.filter((t) => t >= welcomeAt);
        check(pings.length >= 3, `${pings.length} pings in ${interval * 6} ms at a ${interval} ms interval`);
        // The rule that matters: never silent for a TTL (2 × interval); 100 ms for the kit's own timers,
        // plus the longest the kit's event loop was held up while it watched.
        const times = [welcomeAt, ...pings, Date.now()];
        const slack = 100 + Math.ceil(kitLag.max / 1e6);
        for (let i = 1; i < times.length; i++) {
          const gap = times[i]! - times[i - 1]!;
          check(
            gap < ttl + slack,
            `a ${gap} ms gap between heartbeats; the TTL is ${ttl} ms (the kit's slack ${slack} ms)`,
          );
        }
      } finally {
        kitLag.disable();
      }
    },
  },
  {
    name: 'chat',
    description: 'non-streamed chat job: one result, no chunks, OpenAI chat.completion with usage',
    needs: ADMITTED,
    run: async (context) => {
      const { socket, settings } = context;
      const { manifest } = await admitAndSettle(context);
      const job = chatJob(modelOf(manifest, 'chat').id, false, 8, settings.jobTimeoutMs);
      socket.send(job);
      const outcome = await collectJob(socket, job.jobId, settings.jobTimeoutMs);
      check(outcome.chunks.length === 0, `${outcome.chunks.length} chunks for a stream: false job`);
      const result = requireResult(outcome);
      checkUsage(result.response.usage, true, checkChatCompletion(result.response));
    },
  },
  {
    name: 'chat_stream',
    description:
      'streamed chat job: chunks numbered from 0, then a result whose content is their concatenation (and whose completion_tokens their `tokens` add up to, when set)',
    needs: ADMITTED,
    run: async (context) => {
      const { socket, settings } = context;
      const { manifest } = await admitAndSettle(context);
      const job = chatJob(modelOf(manifest, 'chat').id, true, 8, settings.jobTimeoutMs);
      socket.send(job);
      const outcome = await collectJob(socket, job.jobId, settings.jobTimeoutMs);
      check(outcome.chunks.length > 0, 'no chunk for a stream: true job');
      const streamed = outcome.chunks.map((c) => checkChatChunk(c.chunk)).join('');
      const result = requireResult(outcome);
      const content = checkChatCompletion(result.response);
      check(content === streamed, 'the result content differs from the concatenated chunk deltas');
      checkUsage(result.response.usage, true, content);
      const counted = outcome.chunks.filter((c) => c.tokens !== undefined);
      if (counted.length > 0) {
        check(
          counted.length === outcome.chunks.length,
          `${outcome.chunks.length - counted.length} of ${outcome.chunks.length} chunks without tokens; set it on every chunk or on none`,
        );
        const sum = counted.reduce((total, c) => total + c.tokens!, 0);
        const { completion_tokens } = result.response.usage;
        check(
          sum === completion_tokens,
          `the chunks' tokens add up to ${sum}, completion_tokens is ${completion_tokens}`,
        );
      }
    },
  },
  {
    name: 'embedding',
    description: 'embedding job with two inputs: an OpenAI list of two vectors with usage',
    needs: ADMITTED,
    run: async (context) => {
      const { socket, settings } = context;
      const { manifest } = await admitAndSettle(context);
      const model = modelOf(manifest, 'embedding').id;
      const job = createFrame('job', {
        jobId: `job-${randomUUID()}`,
        kind: 'embedding',
        model,
        request: { model, input: ['hello', 'conformance kit'] },
        stream: false,
        timeoutMs: settings.jobTimeoutMs,
      });
      socket.send(job);
      const outcome = await collectJob(socket, job.jobId, settings.jobTimeoutMs);
      check(outcome.chunks.length === 0, 'an embedding job sent chunks');
      const result = requireResult(outcome);
      checkEmbeddings(result.response, 2);
      checkUsage(result.response.usage, false);
    },
  },
  {
    name: 'cancel',
    description:
      'cancel right after a long job (then ping): error job_cancelled (or a result that crossed the cancel), then nothing more for that job',
    needs: [...ADMITTED, 'chat_stream'],
    run: async (context) => {
      const { socket, settings } = context;
      const { manifest } = await admitAndSettle(context);
      const job = chatJob(
        modelOf(manifest, 'chat').id,
        true,
        settings.cancelMaxTokens,
        settings.jobTimeoutMs,
      );
      socket.send(job);
      // The cancel goes right after the job, with a ping behind it: a node handles frames in order, so
      // its pong shows it has handled the cancel. A job that ended before that (a fast node) is fine;
      // anything for the job after the pong, or a result instead of job_cancelled after it, is not.
      socket.send(createFrame('cancel', { jobId: job.jobId, reason: 'conformance' }));
      socket.send(createFrame('ping', { ts: 626262 }));
      let ponged = false;
      let ended: 'result' | 'error' | undefined;
      const deadline = Date.now() + settings.jobTimeoutMs;
      while (!ended || !ponged) {
        const frame = await socket.expect(
          ['chunk', 'result', 'error', 'presence', 'pong'],
          Math.max(1, deadline - Date.now()),
        );
        if (frame.type === 'pong') {
          ponged ||= frame.ts === 626262;
          continue;
        }
        if (frame.type === 'presence') continue;
        check(
          frame.jobId === job.jobId,
          `${frame.type} for job ${String(frame.jobId)}, expected ${job.jobId}`,
        );
        check(!ended, `${frame.type} for the job after it ended`);
        if (frame.type === 'chunk') {
          check(!ponged, 'a chunk after the node handled the cancel');
          continue;
        }
        if (frame.type === 'result') check(!ponged, 'the node finished the job instead of cancelling it');
        else check(frame.code === 'job_cancelled', `ended with ${frame.code}, expected job_cancelled`);
        ended = frame.type;
      }
      const quiet = Date.now() + Math.max(300, settings.heartbeatIntervalMs * 2);
      for (let left = quiet - Date.now(); left > 0; left = quiet - Date.now()) {
        const event = await socket.next(left);
        if (!event) break;
        if (event.kind === 'frame' && 'jobId' in event.frame) {
          check(event.frame.jobId !== job.jobId, `${event.frame.type} for the job after it was cancelled`);
        }
      }
    },
  },
  {
    name: 'malformed',
    description: 'a frame that is not JSON: close 4000 (malformed_frame)',
    needs: ADMITTED,
    run: async (context) => {
      await admitAndSettle(context);
      context.socket.sendRaw('{"v":0,"type":"ping",');
      await expectProtocolClose(context.socket, 'malformed_frame', context.settings.stepTimeoutMs);
    },
  },
  {
    name: 'oversized',
    description: 'a frame over welcome.maxFrameBytes: close 4003 (frame_too_large) or 1009',
    needs: ADMITTED,
    run: async (context) => {
      await admitAndSettle(context);
      const frame = JSON.stringify({
        v: 0,
        type: 'ping',
        ts: 1,
        pad: 'x'.repeat(context.settings.maxFrameBytes),
      });
      context.socket.sendRaw(frame);
      await expectProtocolClose(context.socket, 'frame_too_large', context.settings.stepTimeoutMs, [1009]);
    },
  },
  {
    name: 'out_of_order',
    description: 'a second challenge after the handshake: close 4005 (out_of_order)',
    needs: ADMITTED,
    run: async (context) => {
      await admitAndSettle(context);
      const now = Date.now();
      context.socket.send(
        createFrame('challenge', {
          nonce: 'ab'.repeat(16),
          issuedAt: new Date(now).toISOString(),
          expiresAt: new Date(now + 60_000).toISOString(),
          coordinatorId: 'gpumesh-conformance',
        }),
      );
      await expectProtocolClose(context.socket, 'out_of_order', context.settings.stepTimeoutMs);
    },
  },
  {
    name: 'drain',
    description: 'drain: presence draining, then presence offline, bye, close 1000',
    needs: ADMITTED,
    run: async (context) => {
      const { socket, settings } = context;
      await admitAndSettle(context);
      const deadlineMs = settings.stepTimeoutMs;
      socket.send(createFrame('drain', { deadlineMs }));
      const draining = await socket.expect('presence', settings.stepTimeoutMs);
      check(draining.status === 'draining', `presence ${draining.status} after drain, expected draining`);
      const offline = await socket.expect('presence', deadlineMs + settings.stepTimeoutMs);
      check(offline.status === 'offline', `presence ${offline.status} while draining, expected offline`);
      await socket.expect('bye', settings.stepTimeoutMs);
      const { code } = await socket.expectClose(settings.stepTimeoutMs);
      check(code === NORMAL_CLOSE_CODE, `closed with ${code} after bye, expected ${NORMAL_CLOSE_CODE}`);
    },
  },
  ...NODE_SCENARIOS_V0_1,
  // Vision and voice (media-scenarios.ts).
  ...MEDIA_SCENARIOS,
  ...VERIFY_SCENARIOS,
  // v0.5: the prefix cache (prefix-cache-scenario.ts).
  PREFIX_CACHE_SCENARIO,
];

/** The names of the node scenarios, in order. */
export const NODE_SCENARIO_NAMES = NODE_SCENARIOS.map((s) => s.name);
