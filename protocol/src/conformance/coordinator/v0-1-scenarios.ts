/**
 * Coordinator scenarios added with protocol v0.1: bad frames in each check of NODE_PROTOCOL.md §2,
 * late and unknown job frames (§9), re-sent manifests, presence refusals, node ids in any case,
 * the tier limit in welcome, bye, session errors and replaced sessions. Each one has a reference
 * coordinator that breaks exactly its rule (reference-coordinator.ts, `breaks`).
 */
import { createFrame } from '../../create-frame.js';
import { PROTOCOL_ERRORS, type ProtocolErrorCode } from '../../errors.js';
import { signManifest } from '../../identity/sign-manifest.js';
import type { Frame } from '../../messages.js';
import { ConformanceSkip, check } from '../failure.js';
import type { FrameSocket } from '../frame-socket.js';
import type { CoordinatorScenario, CoordinatorScenarioContext } from './context.js';
import { authenticate, createKitNode, join } from './kit-node.js';

const HANDSHAKE = ['handshake'] as const;
const JOINED = ['handshake', 'manifest'] as const;

/** The coordinator must close with the code of `errorCode` (an `error` frame before it must carry that code). */
async function expectClose(socket: FrameSocket, errorCode: ProtocolErrorCode, timeoutMs: number) {
  const closeCode = PROTOCOL_ERRORS[errorCode].closeCode;
  const { code, frames } = await socket.expectClose(timeoutMs);
  for (const frame of frames) {
    check(frame.type !== 'welcome', 'the coordinator sent welcome');
    if (frame.type === 'error')
      check(frame.code === errorCode, `error frame ${frame.code}, expected ${errorCode}`);
  }
  check(code === closeCode, `closed with ${code}, expected ${closeCode} (${errorCode})`);
}

/**
 * Pings and reads until the pong: every frame before it is returned (a coordinator handles a
 * session's frames in order, so the pong comes after its answers to what was sent before).
 */
async function untilPong(socket: FrameSocket, timeoutMs: number) {
  const ts = Date.now();
  socket.send(createFrame('ping', { ts }));
  const frames: Frame[] = [];
  for (;;) {
    const frame = await socket.expect(['pong', 'error', 'manifest_ack'], timeoutMs, ['ping']);
    if (frame.type === 'pong' && frame.ts === ts) return frames;
    if (frame.type !== 'pong') frames.push(frame);
  }
}

/** A first message that must close the session with `errorCode`. */
function badFirstFrame(
  name: string,
  description: string,
  errorCode: ProtocolErrorCode,
  message: (context: CoordinatorScenarioContext) => string | Buffer,
): CoordinatorScenario {
  return {
    name,
    description,
    needs: [],
    run: async (context) => {
      const socket = await context.connect();
      socket.sendRaw(message(context));
      await expectClose(socket, errorCode, context.settings.stepTimeoutMs);
    },
  };
}

/** A valid hello as JSON, with `changes` merged in (members set to undefined are left out). */
function helloJson(context: CoordinatorScenarioContext, changes: Record<string, unknown> = {}): string {
  const node = createKitNode(context.settings);
  return JSON.stringify({
    ...createFrame('hello', {
      nodeId: node.account.address,
      role: 'cpu',
      versions: [0],
      software: { name: 'gpumesh-conformance', version: '0' },
    }),
    ...changes,
  });
}

/** The coordinator scenarios of protocol v0.1, run after the v0 ones. */
export const COORDINATOR_SCENARIOS_V0_1: readonly CoordinatorScenario[] = [
  {
    name: 'late_job_frames',
    description:
      'after a job ended: the node’s late error and chunk for it, and an error for a job never sent, get no unknown_job',
    needs: [...JOINED, 'jobs'],
    run: async (context) => {
      const { settings } = context;
      const trigger = settings.trigger;
      if (!trigger)
        throw new ConformanceSkip('no way to send client requests (give --api-url and --api-key)');
      const socket = await context.connect();
      await join(socket, createKitNode(settings), settings);
      const model = settings.chatModel;
      const response = trigger({
        kind: 'chat',
        model,
        body: { model, messages: [{ role: 'user', content: 'late' }] },
      }).catch(() => '');
      const job = await socket.expect('job', settings.jobTimeoutMs, ['pong', 'manifest_ack']);
      const message = { role: 'assistant', content: 'kit-late-1' };
      const usage = { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 };
      socket.send(
        createFrame('result', {
          jobId: job.jobId,
          response: {
            id: 'kit-late',
            object: 'chat.completion',
            created: 0,
            model,
            choices: [{ index: 0, message, finish_reason: 'stop' }],
            usage,
          },
        }),
      );
      await response;
      const cancelled = { code: 'job_cancelled', message: 'Cancelled.', retryable: false } as const;
      socket.send(createFrame('error', { jobId: job.jobId, ...cancelled }));
      socket.send(createFrame('error', { jobId: 'job-never-sent-by-you', ...cancelled }));
      const delta = { index: 0, delta: { content: 'late' }, finish_reason: null };
      socket.send(
        createFrame('chunk', {
          jobId: job.jobId,
          seq: 0,
          chunk: { id: 'kit-late', object: 'chat.completion.chunk', created: 0, model, choices: [delta] },
        }),
      );
      const answers = await untilPong(socket, settings.stepTimeoutMs);
      const unknown = answers.filter((f) => f.type === 'error' && f.code === 'unknown_job');
      check(
        unknown.length === 0,
        `${unknown.length} unknown_job answers to frames of an ended job or to errors`,
      );
    },
  },
  {
    name: 'empty_output',
    description:
      'an empty answer (a streamed job ending in a result with content "" and no chunk) reaches the client as a success',
    needs: [...JOINED, 'jobs'],
    run: async (context) => {
      const { settings } = context;
      const trigger = settings.trigger;
      if (!trigger)
        throw new ConformanceSkip('no way to send client requests (give --api-url and --api-key)');
      const socket = await context.connect();
      await join(socket, createKitNode(settings), settings);
      const model = settings.chatModel;
      let failure: unknown;
      const response = trigger({
        kind: 'chat',
        model,
        body: { model, messages: [{ role: 'user', content: 'say nothing' }], stream: true },
      }).catch((error: unknown) => {
        failure = error;
        return '';
      });
      const job = await socket.expect('job', settings.jobTimeoutMs, ['pong', 'manifest_ack']);
      const message = { role: 'assistant', content: '' };
      socket.send(
        createFrame('result', {
          jobId: job.jobId,
          response: {
            id: 'kit-empty',
            object: 'chat.completion',
            created: 0,
            model,
            choices: [{ index: 0, message, finish_reason: 'stop' }],
            usage: { prompt_tokens: 3, completion_tokens: 0, total_tokens: 3 },
          },
        }),
      );
      const text = await response;
      check(!failure, `the client request failed: ${String(failure)}`);
      check(!text.includes('"error"'), `the client got an error for an empty answer: ${text.slice(0, 200)}`);
    },
  },
  {
    name: 'unknown_job',
    description: 'a result for a job id never sent: error unknown_job with that id; the session continues',
    needs: JOINED,
    run: async (context) => {
      const { settings } = context;
      const socket = await context.connect();
      await join(socket, createKitNode(settings), settings);
      socket.send(
        createFrame('result', {
          jobId: 'job-never-sent',
          response: { usage: { prompt_tokens: 1, completion_tokens: 0, total_tokens: 1 } },
        }),
      );
      const answers = await untilPong(socket, settings.stepTimeoutMs);
      check(
        answers.some((f) => f.type === 'error' && f.code === 'unknown_job' && f.jobId === 'job-never-sent'),
        'no error unknown_job for job-never-sent',
      );
      check(socket.open, 'the coordinator closed the session');
    },
  },
  badFirstFrame('unknown_type', 'a frame of an unknown type: close 4001 (unknown_type)', 'unknown_type', () =>
    JSON.stringify({ v: 0, type: 'gpumesh_conformance_nope' }),
  ),
  badFirstFrame(
    'schema_violation',
    'a hello whose versions is a string: close 4002 (schema_violation)',
    'schema_violation',
    (context) => helloJson(context, { versions: '0' }),
  ),
  badFirstFrame(
    'binary',
    'a binary WebSocket message: close 4000 (malformed_frame)',
    'malformed_frame',
    (context) => Buffer.from(helloJson(context)),
  ),
  badFirstFrame(
    'wrong_version',
    'a hello with v: 1 (an integer, not the version of the grammar): close 4004 (unsupported_version)',
    'unsupported_version',
    (context) => helloJson(context, { v: 1 }),
  ),
  badFirstFrame(
    'missing_version',
    'a hello without v (check order: type, then v): close 4002 (schema_violation)',
    'schema_violation',
    (context) => helloJson(context, { v: undefined }),
  ),
  badFirstFrame(
    'wrong_direction',
    'a valid frame only coordinators send (drain): close 4005 (out_of_order)',
    'out_of_order',
    () => JSON.stringify(createFrame('drain', { deadlineMs: 1000 })),
  ),
  {
    name: 'manifest_resend',
    description: 'a new signed manifest in ready (a model unloaded): a new manifest_ack listing what is left',
    needs: JOINED,
    run: async (context) => {
      const { settings } = context;
      const socket = await context.connect();
      const node = createKitNode(settings);
      const { ack } = await join(socket, node, settings);
      check(ack.models.includes(settings.chatModel), `the coordinator will not route ${settings.chatModel}`);
      const manifest = {
        ...node.manifest,
        models: node.manifest.models.filter((m) => m.id !== settings.chatModel),
        issuedAt: new Date(Date.parse(node.manifest.issuedAt) + 1000).toISOString(),
      };
      socket.send(
        createFrame('manifest', { manifest, signature: await signManifest(manifest, node.account) }),
      );
      const second = await socket.expect('manifest_ack', settings.stepTimeoutMs, ['pong']);
      check(
        !second.models.includes(settings.chatModel),
        `the second manifest_ack still lists ${settings.chatModel}, which the new manifest dropped`,
      );
    },
  },
  {
    name: 'presence_invalid',
    description:
      'presence online after draining: error presence_invalid without a close; the session continues',
    needs: JOINED,
    run: async (context) => {
      const { settings } = context;
      const socket = await context.connect();
      await join(socket, createKitNode(settings), settings);
      const load = { inFlight: 0, capacity: 1 };
      socket.send(createFrame('presence', { status: 'draining', load }));
      socket.send(createFrame('presence', { status: 'online', load }));
      const answers = await untilPong(socket, settings.stepTimeoutMs);
      check(
        answers.some((f) => f.type === 'error' && f.code === 'presence_invalid' && f.jobId === undefined),
        'no error presence_invalid for online after draining',
      );
      check(socket.open, 'the coordinator closed the session');
    },
  },
  {
    name: 'lowercase_node_id',
    description: 'hello.nodeId in lower case, manifest.nodeId checksummed: they match (no EIP-55 check)',
    needs: JOINED,
    run: async (context) => {
      const { settings } = context;
      const socket = await context.connect();
      const node = createKitNode(settings);
      const lower = node.account.address.toLowerCase() as `0x${string}`;
      await join(socket, { ...node, account: { ...node.account, address: lower } }, settings);
    },
  },
  {
    name: 'tier_limit',
    description: 'welcome carries maxConcurrentJobs (v0.1), an integer ≥ 1',
    needs: HANDSHAKE,
    run: async (context) => {
      const welcome = await authenticate(
        await context.connect(),
        createKitNode(context.settings),
        context.settings,
      );
      check(welcome.maxConcurrentJobs !== undefined, 'welcome has no maxConcurrentJobs');
      check(welcome.maxConcurrentJobs >= 1, `welcome.maxConcurrentJobs ${welcome.maxConcurrentJobs}`);
    },
  },
  {
    name: 'bye',
    description: 'the node sends bye: the coordinator closes with 1000',
    needs: JOINED,
    run: async (context) => {
      const { settings } = context;
      const socket = await context.connect();
      await join(socket, createKitNode(settings), settings);
      socket.send(createFrame('bye', { reason: 'conformance' }));
      const { code } = await socket.expectClose(settings.stepTimeoutMs);
      check(code === 1000, `closed with ${code} after bye, expected 1000`);
    },
  },
  {
    name: 'session_error',
    description: 'a node’s session error not followed by a close: logged, the session continues',
    needs: JOINED,
    run: async (context) => {
      const { settings } = context;
      const socket = await context.connect();
      await join(socket, createKitNode(settings), settings);
      socket.send(createFrame('error', { code: 'internal_error', message: 'conformance', retryable: true }));
      await untilPong(socket, settings.stepTimeoutMs);
      check(socket.open, 'the coordinator closed the session');
    },
  },
  {
    name: 'session_replaced',
    description: 'the same node key joins again: the older session closes with 4011',
    needs: JOINED,
    run: async (context) => {
      const { settings } = context;
      const node = createKitNode(settings);
      const first = await context.connect();
      await join(first, node, settings);
      const second = await context.connect();
      await join(second, node, settings);
      await expectClose(first, 'session_replaced', settings.stepTimeoutMs);
      check(second.open, 'the newer session was closed');
    },
  },
];
