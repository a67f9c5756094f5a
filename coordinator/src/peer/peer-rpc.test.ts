import { randomBytes } from 'node:crypto';
import { canonicalJson, signManifest, verifyManifest } from '@gpumesh/protocol';
import { referenceManifest } from '@gpumesh/protocol/conformance';
import {
  type Client,
  type ClientReadableStream,
  credentials,
  type Metadata,
  Server,
  ServerCredentials,
  type ServerUnaryCall,
  type ServerWritableStream,
  type ServiceError,
  status,
} from '@grpc/grpc-js';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadPeerProto, PEER_METHODS } from './load-peer-proto.js';
import { macPeerCall } from './mac-peer-call.js';
import type {
  EmbedRequest,
  EmbedResponse,
  InferEvent,
  InferRequest,
  PingResponse,
  SignedManifest,
} from './peer-messages.js';
import { signPeerCall } from './sign-peer-call.js';
import { verifyPeerCall } from './verify-peer-call.js';

const coordinator = privateKeyToAccount(generatePrivateKey());
const stranger = privateKeyToAccount(generatePrivateKey());
const node = privateKeyToAccount(generatePrivateKey());
const usage = { prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 };
/** The secret the replicas of one network share (MAC-authenticated calls). */
const replicaSecret = randomBytes(32);

type Unary<Req, Res> = (
  request: Req,
  metadata: Metadata,
  callback: (error: ServiceError | null, response?: Res) => void,
) => void;
type PeerClient = Client & {
  Infer(request: Partial<InferRequest>, metadata: Metadata): ClientReadableStream<InferEvent>;
  Embed: Unary<Partial<EmbedRequest>, EmbedResponse>;
  GetManifest: Unary<{ node_id?: string }, SignedManifest>;
  Ping: Unary<{ ts: number }, PingResponse>;
};

const PeerRpc = loadPeerProto();
const server = new Server();
const seenNonces = new Map<string, number>();
let client: PeerClient;
let cancelledJobs: string[] = [];

/** Wraps a handler with the peer-call check, as a real server does. */
async function authorize(method: string, metadata: Metadata): Promise<ServiceError | undefined> {
  const outcome = await verifyPeerCall(method, metadata, {
    trusted: [coordinator.address],
    seenNonces,
    sharedSecret: replicaSecret,
  });
  if ('caller' in outcome) return undefined;
  return Object.assign(new Error(outcome.rejection.details), {
    code: outcome.rejection.code,
    details: outcome.rejection.details,
    metadata: undefined as unknown as Metadata,
  });
}

beforeAll(async () => {
  server.addService(PeerRpc.service, {
    Infer: async (call: ServerWritableStream<InferRequest, InferEvent>) => {
      const denied = await authorize(PEER_METHODS.Infer, call.metadata);
      if (denied) return call.destroy(denied);
      const { job_id, stream } = call.request;
      call.on('cancelled', () => cancelledJobs.push(job_id));
      const words = ['Hello', ' peer', ' world'];
      if (stream) {
        for (const [seq, content] of words.entries()) {
          if (call.cancelled) return;
          call.write({
            event: 'chunk',
            chunk: {
              seq,
              chunk_json: JSON.stringify({
                object: 'chat.completion.chunk',
                choices: [{ index: 0, delta: { content } }],
              }),
              tokens: 1,
            },
          });
          await new Promise((resolve) => setTimeout(resolve, job_id === 'slow' ? 200 : 1));
        }
      }
      const response = {
        object: 'chat.completion',
        choices: [{ index: 0, message: { role: 'assistant', content: words.join('') } }],
        usage,
      };
      call.write({ event: 'result', result: { response_json: JSON.stringify(response), usage } });
      call.end();
    },
    Embed: async (
      call: ServerUnaryCall<EmbedRequest, EmbedResponse>,
      callback: (e: ServiceError | null, r?: EmbedResponse) => void,
    ) => {
      const denied = await authorize(PEER_METHODS.Embed, call.metadata);
      if (denied) return callback(denied);
      if (call.request.model !== 'tiny-embed') {
        return callback(null, {
          outcome: 'error',
          error: { code: 'model_not_found', message: 'no such model', retryable: true },
        });
      }
      const response = {
        object: 'list',
        data: [{ object: 'embedding', index: 0, embedding: [0.6, 0.8] }],
        usage: { ...usage, completion_tokens: 0, total_tokens: 2 },
      };
      callback(null, {
        outcome: 'result',
        result: { response_json: JSON.stringify(response), usage: response.usage },
      });
    },
    GetManifest: async (
      call: ServerUnaryCall<unknown, SignedManifest>,
      callback: (e: ServiceError | null, r?: SignedManifest) => void,
    ) => {
      const denied = await authorize(PEER_METHODS.GetManifest, call.metadata);
      if (denied) return callback(denied);
      const manifest = referenceManifest(node.address);
      callback(null, {
        manifest_json: canonicalJson(manifest),
        signature: await signManifest(manifest, node),
      });
    },
    Ping: async (
      call: ServerUnaryCall<{ ts: number }, PingResponse>,
      callback: (e: ServiceError | null, r?: PingResponse) => void,
    ) => {
      const denied = await authorize(PEER_METHODS.Ping, call.metadata);
      if (denied) return callback(denied);
      callback(null, { ts: call.request.ts, server_ts: Date.now(), id: node.address });
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    ),
  );
  client = new PeerRpc(`127.0.0.1:${port}`, credentials.createInsecure()) as unknown as PeerClient;
});

afterAll(() => {
  client?.close();
  server.forceShutdown();
});

function unary<Req, Res>(method: Unary<Req, Res>, request: Req, metadata: Metadata): Promise<Res> {
  return new Promise((resolve, reject) =>
    method.call(client, request, metadata, (error, response) => (error ? reject(error) : resolve(response!))),
  );
}

function collect(stream: ClientReadableStream<InferEvent>): Promise<InferEvent[]> {
  const events: InferEvent[] = [];
  return new Promise((resolve, reject) => {
    stream.on('data', (event: InferEvent) => events.push(event));
    stream.on('end', () => resolve(events));
    stream.on('error', reject);
  });
}

describe('peer-RPC (gpumesh.proto over grpc-js)', () => {
  test('default: Ping', async () => {
    const response = await unary(
      client.Ping,
      { ts: 1767225600000 },
      await signPeerCall(PEER_METHODS.Ping, coordinator),
    );
    expect(response.ts).toBe(1767225600000);
    expect(response.id).toBe(node.address);
    expect(response.server_ts).toBeGreaterThan(0);
  });

  test('behavior: Infer streams chunks then the result', async () => {
    const request = {
      job_id: 'j1',
      kind: 'chat' as const,
      model: 'tiny-chat',
      request_json: '{"messages":[]}',
      stream: true,
      timeout_ms: 5000,
    };
    const events = await collect(client.Infer(request, await signPeerCall(PEER_METHODS.Infer, coordinator)));
    expect(events.map((e) => e.event)).toEqual(['chunk', 'chunk', 'chunk', 'result']);
    expect(events.map((e) => (e.event === 'chunk' ? e.chunk.tokens : undefined))).toEqual([
      1,
      1,
      1,
      undefined,
    ]);
    const last = events.at(-1);
    expect(last?.event === 'result' && JSON.parse(last.result.response_json).choices[0].message.content).toBe(
      'Hello peer world',
    );
    expect(last?.event === 'result' && last.result.usage).toEqual(usage);
  });

  test('behavior: cancelling Infer reaches the server', async () => {
    cancelledJobs = [];
    const request = {
      job_id: 'slow',
      kind: 'chat' as const,
      model: 'tiny-chat',
      request_json: '{}',
      stream: true,
      timeout_ms: 5000,
    };
    const stream = client.Infer(request, await signPeerCall(PEER_METHODS.Infer, coordinator));
    const error = await new Promise<ServiceError>((resolve) => {
      stream.once('data', () => stream.cancel());
      stream.on('error', resolve);
    });
    expect(error.code).toBe(status.CANCELLED);
    await expect.poll(() => cancelledJobs).toEqual(['slow']);
  });

  test('behavior: Embed returns a result or a job error', async () => {
    const ok = await unary(
      client.Embed,
      { job_id: 'e1', model: 'tiny-embed', request_json: '{"input":"x"}', timeout_ms: 1000 },
      await signPeerCall(PEER_METHODS.Embed, coordinator),
    );
    expect(ok.outcome).toBe('result');
    expect(ok.outcome === 'result' && JSON.parse(ok.result.response_json).data[0].embedding).toEqual([
      0.6, 0.8,
    ]);
    const missing = await unary(
      client.Embed,
      { job_id: 'e2', model: 'nope', request_json: '{}', timeout_ms: 1000 },
      await signPeerCall(PEER_METHODS.Embed, coordinator),
    );
    expect(missing).toMatchObject({ outcome: 'error', error: { code: 'model_not_found', retryable: true } });
  });

  test('behavior: GetManifest returns a manifest whose signature verifies', async () => {
    const signed = await unary(
      client.GetManifest,
      {},
      await signPeerCall(PEER_METHODS.GetManifest, coordinator),
    );
    const manifest = JSON.parse(signed.manifest_json);
    expect(canonicalJson(manifest)).toBe(signed.manifest_json);
    expect(await verifyManifest(manifest, signed.signature)).toBe(true);
  });

  test('error: calls without a valid signature are refused', async () => {
    const { Metadata } = await import('@grpc/grpc-js');
    await expect(unary(client.Ping, { ts: 1 }, new Metadata())).rejects.toMatchObject({
      code: status.UNAUTHENTICATED,
    });
    // Signed for another method: the signature does not cover this one.
    await expect(
      unary(client.Ping, { ts: 1 }, await signPeerCall(PEER_METHODS.Embed, coordinator)),
    ).rejects.toMatchObject({ code: status.UNAUTHENTICATED });
    // An old timestamp.
    const stale = await signPeerCall(PEER_METHODS.Ping, coordinator, Date.now() - 120_000);
    await expect(unary(client.Ping, { ts: 1 }, stale)).rejects.toMatchObject({
      code: status.UNAUTHENTICATED,
    });
    // A replay of a call already made.
    const once = await signPeerCall(PEER_METHODS.Ping, coordinator);
    await unary(client.Ping, { ts: 1 }, once);
    await expect(unary(client.Ping, { ts: 1 }, once)).rejects.toMatchObject({ code: status.UNAUTHENTICATED });
    // A valid signature by a key the server does not trust.
    await expect(
      unary(client.Ping, { ts: 1 }, await signPeerCall(PEER_METHODS.Ping, stranger)),
    ).rejects.toMatchObject({ code: status.PERMISSION_DENIED });
  });
  test('behavior: replicas sharing a secret authenticate calls with an HMAC; a wrong secret, another method or a replay is refused', async () => {
    const replica = privateKeyToAccount(generatePrivateKey()).address; // not in the trusted list
    const pong = await unary(client.Ping, { ts: 7 }, macPeerCall(PEER_METHODS.Ping, replica, replicaSecret));
    expect(pong).toMatchObject({ ts: 7 });
    await expect(
      unary(client.Ping, { ts: 1 }, macPeerCall(PEER_METHODS.Ping, replica, randomBytes(32))),
    ).rejects.toMatchObject({ code: status.UNAUTHENTICATED });
    await expect(
      unary(client.Ping, { ts: 1 }, macPeerCall(PEER_METHODS.Embed, replica, replicaSecret)),
    ).rejects.toMatchObject({ code: status.UNAUTHENTICATED });
    const once = macPeerCall(PEER_METHODS.Ping, replica, replicaSecret);
    await unary(client.Ping, { ts: 1 }, once);
    await expect(unary(client.Ping, { ts: 1 }, once)).rejects.toMatchObject({ code: status.UNAUTHENTICATED });
    const stale = macPeerCall(PEER_METHODS.Ping, replica, replicaSecret, Date.now() - 120_000);
    await expect(unary(client.Ping, { ts: 1 }, stale)).rejects.toMatchObject({
      code: status.UNAUTHENTICATED,
    });
  });

  test('behavior: a server that shares no secret ignores a MAC: the call is unauthenticated', async () => {
    const outcome = await verifyPeerCall(
      PEER_METHODS.Ping,
      macPeerCall(PEER_METHODS.Ping, coordinator.address, replicaSecret),
      { trusted: [coordinator.address], seenNonces: new Map() },
    );
    expect(outcome).toMatchObject({ rejection: { code: status.UNAUTHENTICATED } });
  });
});
