import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { PROTOCOL_VERSION } from '../../constants.js';
import { createFrame } from '../../create-frame.js';
import { PROTOCOL_ERRORS, type ProtocolErrorCode } from '../../errors.js';
import { signChallenge } from '../../identity/sign-challenge.js';
import { signManifest } from '../../identity/sign-manifest.js';
import { ConformanceFailure, ConformanceSkip, check } from '../failure.js';
import type { FrameSocket } from '../frame-socket.js';
import type { CoordinatorScenario, CoordinatorScenarioContext, InferenceRequest } from './context.js';
import { authenticate, createKitNode, join, requestChallenge, sendHello } from './kit-node.js';
import { COORDINATOR_SCENARIOS_V0_1 } from './v0-1-scenarios.js';

const HANDSHAKE = ['handshake'] as const;

/** The coordinator must close with the code of `errorCode` (an error frame before, if any, must match). */
async function expectProtocolClose(
  socket: FrameSocket,
  errorCode: ProtocolErrorCode,
  timeoutMs: number,
  alsoAccepted: readonly number[] = [],
): Promise<void> {
  const closeCode = PROTOCOL_ERRORS[errorCode].closeCode;
  const { code, frames } = await socket.expectClose(timeoutMs);
  for (const frame of frames) {
    check(frame.type !== 'welcome', 'the coordinator sent welcome');
    if (frame.type === 'error')
      check(frame.code === errorCode, `error frame ${frame.code}, expected ${errorCode}`);
  }
  check(
    code === closeCode || alsoAccepted.includes(code),
    `closed with ${code}, expected ${closeCode} (${errorCode})`,
  );
}

/** Triggers a client request and, meanwhile, answers the job it produces with `answer`. */
async function roundTrip(
  context: CoordinatorScenarioContext,
  socket: FrameSocket,
  request: InferenceRequest,
  answer: (jobId: string) => void,
): Promise<string> {
  const { trigger, jobTimeoutMs } = context.settings;
  if (!trigger) throw new ConformanceSkip('no way to send client requests (give --api-url and --api-key)');
  let failure: unknown;
  const response = trigger(request).catch((error: unknown) => {
    failure = error;
    return '';
  });
  const job = await socket
    .expect('job', jobTimeoutMs, ['pong', 'manifest_ack'])
    .catch(async (error: unknown) => {
      await response;
      if (failure)
        throw new ConformanceFailure(`the client request failed before any job: ${String(failure)}`);
      throw error;
    });
  check(job.kind === request.kind, `job.kind ${job.kind}, expected ${request.kind}`);
  check(job.model === request.model, `job.model ${job.model}, expected ${request.model}`);
  check(job.timeoutMs > 0, 'job.timeoutMs must be positive');
  if (request.kind === 'chat') {
    check(Array.isArray(job.request.messages), 'job.request.messages is not the client’s messages');
    check(
      job.stream === Boolean(request.body.stream),
      `job.stream ${job.stream}, the client asked ${Boolean(request.body.stream)}`,
    );
  }
  answer(job.jobId);
  const text = await Promise.race([
    response,
    new Promise<string>((resolve) => setTimeout(() => resolve(''), jobTimeoutMs)),
  ]);
  if (failure) throw new ConformanceFailure(`the client request failed: ${String(failure)}`);
  return text;
}

const usage = { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 };

/** Every scenario the kit runs against a coordinator, in order. */
export const COORDINATOR_SCENARIOS: readonly CoordinatorScenario[] = [
  {
    name: 'handshake',
    description: 'hello → challenge; a correct auth → welcome with version 0, ttlMs = 2 × heartbeat',
    needs: [],
    run: async (context) => {
      await authenticate(await context.connect(), createKitNode(context.settings), context.settings);
    },
  },
  {
    name: 'version',
    description: 'hello offering only an unknown version: close 4004 (unsupported_version)',
    needs: [],
    run: async (context) => {
      const socket = await context.connect();
      sendHello(socket, createKitNode(context.settings), [PROTOCOL_VERSION + 1000]);
      await expectProtocolClose(socket, 'unsupported_version', context.settings.stepTimeoutMs);
    },
  },
  {
    name: 'wrong_signature',
    description: 'auth signed by another key: close 4006 (auth_failed), no welcome',
    needs: HANDSHAKE,
    run: async (context) => {
      const socket = await context.connect();
      const node = createKitNode(context.settings);
      const challenge = await requestChallenge(socket, node, context.settings);
      const impostor = privateKeyToAccount(generatePrivateKey());
      const signature = await signChallenge(challenge, {
        address: node.account.address,
        signMessage: impostor.signMessage,
      });
      socket.send(createFrame('auth', { signature }));
      await expectProtocolClose(socket, 'auth_failed', context.settings.stepTimeoutMs);
    },
  },
  {
    name: 'manifest',
    description: 'a signed manifest is acknowledged with granted scopes and models from it',
    needs: HANDSHAKE,
    run: async (context) => {
      const node = createKitNode(context.settings);
      const { ack } = await join(await context.connect(), node, context.settings);
      for (const model of node.manifest.models) {
        const scope = model.family === 'chat' ? 'infer.chat' : 'infer.embed';
        const listed = ack.models.includes(model.id);
        check(
          listed === ack.scopes.includes(scope),
          `model ${model.id} listed ${listed} but scope ${scope} granted ${!listed}`,
        );
      }
    },
  },
  {
    name: 'bad_manifest_signature',
    description: 'a manifest signed by another key: close 4007 (manifest_signature_invalid)',
    needs: HANDSHAKE,
    run: async (context) => {
      const socket = await context.connect();
      const node = createKitNode(context.settings);
      await authenticate(socket, node, context.settings);
      const impostor = privateKeyToAccount(generatePrivateKey());
      socket.send(
        createFrame('manifest', {
          manifest: node.manifest,
          signature: await signManifest(node.manifest, impostor),
        }),
      );
      await expectProtocolClose(socket, 'manifest_signature_invalid', context.settings.stepTimeoutMs);
    },
  },
  {
    name: 'jobs',
    description:
      'client requests reach the node as jobs (chat, chat streamed, embedding); its answers reach the client',
    needs: ['handshake', 'manifest'],
    run: async (context) => {
      const { settings } = context;
      const socket = await context.connect();
      const { ack } = await join(socket, createKitNode(settings), settings);
      check(ack.models.includes(settings.chatModel), `the coordinator will not route ${settings.chatModel}`);
      const messages = [{ role: 'user', content: 'conformance' }];

      const plain = await roundTrip(
        context,
        socket,
        { kind: 'chat', model: settings.chatModel, body: { model: settings.chatModel, messages } },
        (jobId) => {
          const message = { role: 'assistant', content: 'kit-answer-7f3a' };
          socket.send(
            createFrame('result', {
              jobId,
              response: {
                id: 'kit-1',
                object: 'chat.completion',
                created: 0,
                model: settings.chatModel,
                choices: [{ index: 0, message, finish_reason: 'stop' }],
                usage,
              },
            }),
          );
        },
      );
      check(plain.includes('kit-answer-7f3a'), 'the client response does not carry the node’s answer');

      const streamed = await roundTrip(
        context,
        socket,
        {
          kind: 'chat',
          model: settings.chatModel,
          body: { model: settings.chatModel, messages, stream: true },
        },
        (jobId) => {
          const parts = ['kit-', 'stream-', '9c1e'];
          parts.forEach((content, seq) => {
            const choice = { index: 0, delta: { content }, finish_reason: null };
            socket.send(
              createFrame('chunk', {
                jobId,
                seq,
                chunk: {
                  id: 'kit-2',
                  object: 'chat.completion.chunk',
                  created: 0,
                  model: settings.chatModel,
                  choices: [choice],
                },
              }),
            );
          });
          const message = { role: 'assistant', content: parts.join('') };
          socket.send(
            createFrame('result', {
              jobId,
              response: {
                id: 'kit-2',
                object: 'chat.completion',
                created: 0,
                model: settings.chatModel,
                choices: [{ index: 0, message, finish_reason: 'stop' }],
                usage,
              },
            }),
          );
        },
      );
      check(streamed.includes('stream-'), 'the streamed client response does not carry the node’s chunks');

      if (!ack.models.includes(settings.embeddingModel)) return;
      const embedded = await roundTrip(
        context,
        socket,
        {
          kind: 'embedding',
          model: settings.embeddingModel,
          body: { model: settings.embeddingModel, input: 'conformance' },
        },
        (jobId) => {
          socket.send(
            createFrame('result', {
              jobId,
              response: {
                object: 'list',
                data: [{ object: 'embedding', index: 0, embedding: [0.123456789, 0.5] }],
                model: settings.embeddingModel,
                usage: { prompt_tokens: 1, completion_tokens: 0, total_tokens: 1 },
              },
            }),
          );
        },
      );
      check(embedded.includes('0.123456789'), 'the embedding response does not carry the node’s vector');
    },
  },
  {
    name: 'heartbeat_expiry',
    description: 'pings answered and the session kept while pinging; silence past ttlMs: close 4009',
    needs: ['handshake', 'manifest'],
    run: async (context) => {
      const { settings } = context;
      const socket = await context.connect();
      const { welcome } = await join(socket, createKitNode(settings), settings);
      const { heartbeatIntervalMs: interval, ttlMs } = welcome;
      socket.send(createFrame('ping', { ts: 777 }));
      const pong = await socket.expect('pong', settings.stepTimeoutMs, []);
      check(pong.ts === 777, `pong.ts ${pong.ts}, expected the ping's 777`);
      // The kit's node pings every interval (since welcome): after longer than the TTL it must be open.
      await new Promise((resolve) => setTimeout(resolve, ttlMs * 1.5));
      check(socket.open, 'the coordinator closed a session that kept pinging');
      // Now go silent, not even answering the coordinator's pings.
      socket.stopHeartbeat();
      socket.autoPong = false;
      const silentFrom = Date.now();
      const { code, at } = await socket.expectClose(ttlMs * 1.5 + 1000);
      check(
        code === PROTOCOL_ERRORS.heartbeat_timeout.closeCode,
        `closed with ${code}, expected 4009 (heartbeat_timeout)`,
      );
      check(
        at - silentFrom >= interval,
        `closed ${at - silentFrom} ms into the silence, before one interval`,
      );
    },
  },
  {
    name: 'malformed',
    description: 'a first frame that is not JSON: close 4000 (malformed_frame)',
    needs: [],
    run: async (context) => {
      const socket = await context.connect();
      socket.sendRaw('hello?');
      await expectProtocolClose(socket, 'malformed_frame', context.settings.stepTimeoutMs);
    },
  },
  {
    name: 'out_of_order',
    description: 'a manifest before hello: close 4005 (out_of_order)',
    needs: [],
    run: async (context) => {
      const socket = await context.connect();
      const node = createKitNode(context.settings);
      socket.send(
        createFrame('manifest', {
          manifest: node.manifest,
          signature: await signManifest(node.manifest, node.account),
        }),
      );
      await expectProtocolClose(socket, 'out_of_order', context.settings.stepTimeoutMs);
    },
  },
  {
    name: 'oversized',
    description: 'a frame over welcome.maxFrameBytes: close 4003 (frame_too_large) or 1009',
    needs: HANDSHAKE,
    run: async (context) => {
      const socket = await context.connect();
      const welcome = await authenticate(socket, createKitNode(context.settings), context.settings);
      socket.sendRaw(JSON.stringify({ v: 0, type: 'ping', ts: 1, pad: 'x'.repeat(welcome.maxFrameBytes) }));
      await expectProtocolClose(socket, 'frame_too_large', context.settings.stepTimeoutMs, [1009]);
    },
  },
  ...COORDINATOR_SCENARIOS_V0_1,
];

/** The names of the coordinator scenarios, in order. */
export const COORDINATOR_SCENARIO_NAMES = COORDINATOR_SCENARIOS.map((s) => s.name);
