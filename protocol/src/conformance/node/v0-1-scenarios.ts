/**
 * Node scenarios added with protocol v0.1: the negative paths (refusals, bad frames, the node's own
 * heartbeat timeout) and the rules v0 left open (NODE_PROTOCOL.md, change log). Each one has a
 * reference node that breaks exactly its rule (reference-node.ts, `breaks`). Those that send one
 * job are data for job-scenario.ts (v0-1-job-scenarios.ts, and the odd jobs at the end here).
 */
import { MIN_MAX_FRAME_BYTES, ttlMsFor } from '../../constants.js';
import { createFrame } from '../../create-frame.js';
import type { ProtocolErrorCode } from '../../errors.js';
import { check } from '../failure.js';
import type { FrameSocket } from '../frame-socket.js';
import { admitNode } from './admit-node.js';
import { expectProtocolClose } from './collect-job.js';
import type { NodeScenario } from './context.js';
import { expectAlive, type JobScenarioSpec, jobScenario, refusedWith } from './job-scenario.js';
import { JOB_SCENARIOS_V0_1 } from './v0-1-job-scenarios.js';

const ADMITTED = ['handshake', 'manifest'] as const;
const JOBS = [...ADMITTED, 'chat'] as const;

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

/** Jobs a node must refuse or answer in a particular way, run after the bad-frame scenarios. */
const ODD_JOBS: readonly JobScenarioSpec[] = [
  {
    name: 'kind_mismatch',
    description: 'an embedding job sent to a chat model (§9 "Odd jobs"): error invalid_request',
    needs: JOBS,
    model: 'chat',
    kind: 'embedding',
    after: refusedWith('invalid_request', 'job'),
  },
  {
    name: 'presence_order',
    description:
      'the presence counting a job comes before its first chunk; the one uncounting it after its result (§8)',
    needs: [...JOBS, 'chat_stream', 'presence'],
    model: 'chat',
    kind: 'chat',
    stream: true,
    maxTokens: 4,
    after: async ({ socket, settings }) => {
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
    model: 'embedding',
    kind: 'embedding',
    // Each vector takes well over 100 bytes as JSON, so this many cannot fit in maxFrameBytes.
    request: (_, model, settings) => ({
      model,
      input: Array.from({ length: Math.ceil(settings.maxFrameBytes / 100) }, (_, i) => `t${i}`),
    }),
    after: refusedWith('invalid_request', 'job'),
  },
];

/** The node scenarios of protocol v0.1, run after the v0 ones. */
export const NODE_SCENARIOS_V0_1: readonly NodeScenario[] = [
  ...JOB_SCENARIOS_V0_1,
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
  ...ODD_JOBS.map(jobScenario),
];
