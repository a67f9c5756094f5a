/**
 * Peer-RPC between coordinator replicas (protocol/proto/gpumesh.proto): a replica that picked a
 * node another replica holds sends it the job over gRPC (PeerRelay), and the holding replica runs
 * it on the node's WebSocket and streams the chunks and the result back (startPeerServer). The
 * replica that took the request bills it; the holding replica only carries it. The replicas of one
 * network share a peer secret (router-plugin.ts keeps it in app_secrets), and every call carries an
 * HMAC of its method, caller, nonce and time under it (NODE_PROTOCOL.md §11, macPeerCall): an EIP-191
 * signature costs ~1 ms to make and ~5 ms to recover here, per call; the MAC, microseconds. A nonce
 * is accepted once.
 */
import { randomUUID } from 'node:crypto';
import {
  canonicalJson,
  type EmbedRequest,
  type EmbedResponse,
  type GetManifestRequest,
  type InferEvent,
  type InferRequest,
  loadPeerProto,
  macPeerCall,
  PEER_METHODS,
  type PingRequest,
  type PingResponse,
  type SignedManifest,
  verifyPeerCall,
} from '@gpumesh/protocol';
import {
  type ChannelCredentials,
  type Client,
  type ClientReadableStream,
  credentials,
  Metadata,
  Server,
  ServerCredentials,
  type ServerUnaryCall,
  type ServerWritableStream,
  type ServiceClientConstructor,
  type ServiceError,
  type sendUnaryData,
  status,
} from '@grpc/grpc-js';
import type { Hub, JobError, JobHandle, JobHandlers, JobSpec, JobUsage } from '../hub/hub.js';
import type { Entry } from '../router/pick-index.js';

type PeerClient = Client & {
  Infer(
    request: InferRequest,
    metadata: Metadata,
    options: { deadline: number },
  ): ClientReadableStream<InferEvent>;
  Embed(
    request: EmbedRequest,
    metadata: Metadata,
    options: { deadline: number },
    callback: (error: ServiceError | null, response?: EmbedResponse) => void,
  ): { cancel(): void };
};

/** The PeerRpc service, loaded from the .proto once per process (client and server share it). */
let PeerRpc: ServiceClientConstructor | undefined;
const peerRpc = (): ServiceClientConstructor => {
  PeerRpc ??= loadPeerProto();
  return PeerRpc;
};

/** Time a relayed job gets beyond the node's own timeout: the holding replica answers first. */
const RELAY_GRACE_MS = 2_000;

/** An error the holding replica could not be reached with, before any chunk: another node may serve. */
const unreachable = (detail: string): JobError => ({
  code: 'node_lost',
  message: `The replica holding the node could not be reached (${detail}).`,
  retryable: true,
});

/** Sends jobs for remote nodes to the replicas that hold them. */
export class PeerRelay {
  readonly #hub: Hub;
  readonly #caller: string;
  readonly #secret: Uint8Array;
  readonly #credentials: ChannelCredentials;
  readonly #clients = new Map<string, PeerClient>();

  /** `caller`: this replica's peer address; `secret`: the MAC key the replicas share. */
  constructor(options: { hub: Hub; caller: string; secret: Uint8Array; credentials?: ChannelCredentials }) {
    this.#hub = options.hub;
    this.#caller = options.caller;
    this.#secret = options.secret;
    this.#credentials = options.credentials ?? credentials.createInsecure();
  }

  /** Runs the job on the remote node of `entry`, with the handlers' contract of Hub.dispatch. */
  dispatch(entry: Entry, spec: JobSpec, handlers: JobHandlers): JobHandle {
    const jobId = randomUUID();
    const via = entry.node.via!;
    const { index, clock } = this.#hub;
    index.acquire(entry);
    const startedAt = clock.now();
    let firstSeen = false;
    let finished = false;
    let cancelled: string | undefined;
    let call: { cancel(): void };
    const first = () => {
      if (firstSeen) return;
      firstSeen = true;
      index.observeLatency(entry.node.nodeId, Math.max(0.001, clock.now() - startedAt));
    };
    const finish = (end: () => void) => {
      if (finished) return;
      finished = true;
      index.release(entry);
      end();
    };
    const fail = (error: JobError) => finish(() => handlers.onError(error));
    const client = this.#client(via.peerUrl);
    const deadline = Date.now() + spec.timeoutMs + RELAY_GRACE_MS;
    const method = spec.kind === 'embedding' ? PEER_METHODS.Embed : PEER_METHODS.Infer;
    const requestJson = JSON.stringify(spec.request);
    const metadata = macPeerCall(method, this.#caller, this.#secret);
    if (spec.kind === 'embedding') {
      const request: EmbedRequest = {
        job_id: jobId,
        model: spec.model,
        request_json: requestJson,
        timeout_ms: spec.timeoutMs,
        node_id: entry.node.nodeId,
      };
      call = client.Embed(request, metadata, { deadline }, (error, response) => {
        if (error) return fail(callError(error));
        first();
        if (response?.outcome === 'result') {
          const result = parseResult(response.result.response_json, response.result.usage);
          return result ? finish(() => handlers.onResult(result)) : fail(badAnswer());
        }
        fail(response?.outcome === 'error' ? response.error : badAnswer());
      });
    } else {
      const request: InferRequest = {
        job_id: jobId,
        kind: spec.kind,
        model: spec.model,
        request_json: requestJson,
        stream: spec.stream,
        timeout_ms: spec.timeoutMs,
        node_id: entry.node.nodeId,
      };
      const stream = client.Infer(request, metadata, { deadline });
      call = stream;
      let nextSeq = 0;
      stream.on('data', (event: InferEvent) => {
        if (finished) return;
        first();
        if (event.event === 'chunk') {
          const chunk = parseObject(event.chunk.chunk_json);
          if (!chunk || event.chunk.seq !== nextSeq) {
            stream.cancel();
            return fail(badAnswer());
          }
          nextSeq++;
          handlers.onChunk?.(chunk, event.chunk.seq, event.chunk.tokens ?? undefined);
        } else if (event.event === 'result') {
          const result = parseResult(event.result.response_json, event.result.usage);
          if (result) finish(() => handlers.onResult(result));
          else fail(badAnswer());
        } else if (event.event === 'error') {
          fail(event.error);
        }
      });
      stream.on('error', (error: ServiceError) => {
        if (cancelled !== undefined) fail(cancelledError(cancelled));
        else fail(callError(error));
      });
      stream.on('end', () => fail(badAnswer()));
    }
    return {
      jobId,
      cancel: (reason: string) => {
        if (finished || cancelled !== undefined) return;
        cancelled = reason;
        call.cancel();
        fail(cancelledError(reason));
      },
    };
  }

  close(): void {
    for (const client of this.#clients.values()) client.close();
    this.#clients.clear();
  }

  #client(peerUrl: string): PeerClient {
    let client = this.#clients.get(peerUrl);
    if (!client) {
      client = new (peerRpc())(peerUrl, this.#credentials) as unknown as PeerClient;
      this.#clients.set(peerUrl, client);
    }
    return client;
  }
}

const cancelledError = (reason: string): JobError => ({
  code: 'job_cancelled',
  message: reason,
  retryable: false,
});
const badAnswer = (): JobError => ({
  code: 'provider_error',
  message: 'The replica holding the node answered out of protocol.',
  retryable: false,
});

function callError(error: ServiceError): JobError {
  if (error.code === status.DEADLINE_EXCEEDED)
    return { code: 'job_timeout', message: 'The node did not finish in time.', retryable: true };
  if (error.code === status.UNAVAILABLE) return unreachable('unavailable');
  if (error.code === status.UNAUTHENTICATED || error.code === status.PERMISSION_DENIED)
    return unreachable('refused this replica’s peer key');
  return unreachable(`gRPC status ${error.code}`);
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** The response with the usage the call carried (typed counts), or undefined when it is not JSON. */
function parseResult(
  responseJson: string,
  usage: JobUsage | null | undefined,
): (Record<string, unknown> & { usage: JobUsage }) | undefined {
  const response = parseObject(responseJson);
  if (!response || !usage) return undefined;
  const { prompt_tokens, completion_tokens, total_tokens } = usage;
  return { ...response, usage: { prompt_tokens, completion_tokens, total_tokens } };
}

export type PeerServerOptions = {
  hub: Hub;
  /** The MAC key the replicas share: calls authenticated with it are served. */
  secret: Uint8Array;
  /** Addresses whose EIP-191-signed calls are served too (none by default). */
  trusted?: readonly string[];
  host: string;
  port: number;
  credentials?: ServerCredentials;
  log?: { warn(obj: object, msg: string): void };
};

/** Nonces of accepted calls, kept for twice the accepted clock skew (replays are refused). */
const NONCE_TTL_MS = 120_000;

/**
 * Serves peer-RPC for the nodes this replica holds. Resolves once listening, with the bound port
 * and a close() that ends running calls.
 */
export async function startPeerServer(
  options: PeerServerOptions,
): Promise<{ port: number; close(): Promise<void> }> {
  const { hub } = options;
  const server = new Server();
  const seenNonces = new Map<string, number>();
  const sweep = setInterval(() => {
    const now = Date.now();
    for (const [nonce, at] of seenNonces) if (now - at > NONCE_TTL_MS) seenNonces.delete(nonce);
  }, NONCE_TTL_MS);
  sweep.unref();

  const denied = async (method: string, metadata: Metadata): Promise<ServiceError | undefined> => {
    const outcome = await verifyPeerCall(method, metadata, {
      trusted: options.trusted ?? [],
      seenNonces,
      sharedSecret: options.secret,
    });
    if ('caller' in outcome) return undefined;
    const { code, details } = outcome.rejection;
    options.log?.warn({ method, reason: details }, 'refused a peer-RPC call');
    return Object.assign(new Error(details), { code, details, metadata: new Metadata() });
  };
  /** The entry of a node held here for `model`, or the job error to answer with. */
  const localEntry = (nodeId: string, model: string): Entry | JobError => {
    const node = hub.index.node(nodeId);
    if (!node || node.via || !hub.session(nodeId)?.ready)
      return { code: 'node_lost', message: 'The node is not connected to this replica.', retryable: true };
    const entry = node.entries.get(model);
    if (!entry)
      return { code: 'model_not_found', message: 'The node does not serve this model.', retryable: true };
    return entry;
  };
  /**
   * Runs a relayed job on a node held here, with Hub.dispatch's handlers: a job that cannot start
   * (node gone, model not served, request not an object) ends at once with onError, and the call's
   * cancellation cancels the job.
   */
  const runHere = (
    call: { readonly cancelled: boolean; on(event: 'cancelled', listener: () => void): unknown },
    request: InferRequest | EmbedRequest,
    kind: JobSpec['kind'],
    stream: boolean,
    handlers: JobHandlers,
  ): void => {
    const entry = localEntry(request.node_id, request.model);
    if (!('node' in entry)) {
      handlers.onError(entry);
      return;
    }
    const parsed = parseObject(request.request_json);
    if (!parsed) {
      handlers.onError(invalid('request_json is not a JSON object'));
      return;
    }
    const timeoutMs = request.timeout_ms > 0 ? request.timeout_ms : 60_000;
    const spec: JobSpec = { kind, model: request.model, request: parsed, stream, timeoutMs };
    const handle = dispatchSafely(hub, entry, spec, handlers);
    // A call cancelled while the job was being sent has already fired its event.
    if (call.cancelled) handle.cancel('the relaying replica cancelled');
    else call.on('cancelled', () => handle.cancel('the relaying replica cancelled'));
  };

  server.addService(peerRpc().service, {
    Infer: async (call: ServerWritableStream<InferRequest, InferEvent>) => {
      const refusal = await denied(PEER_METHODS.Infer, call.metadata);
      // A streaming call's status goes out on its 'error' event (destroy() would leave it open).
      if (refusal) return void call.emit('error', refusal);
      const request = call.request;
      const end = (event: InferEvent) => {
        if (call.cancelled || call.destroyed) return;
        call.write(event);
        call.end();
      };
      if (request.kind !== 'chat' && request.kind !== 'completion')
        return end({ event: 'error', error: invalid('kind must be chat or completion') });
      runHere(call, request, request.kind, request.stream, {
        onChunk: (chunk, seq, tokens) => {
          if (call.cancelled || call.destroyed) return;
          call.write({
            event: 'chunk',
            chunk: { seq, chunk_json: JSON.stringify(chunk), ...(tokens === undefined ? {} : { tokens }) },
          });
        },
        onResult: (response) =>
          end({
            event: 'result',
            result: { response_json: JSON.stringify(response), usage: response.usage },
          }),
        onError: (error) => end({ event: 'error', error }),
      });
    },
    Embed: async (
      call: ServerUnaryCall<EmbedRequest, EmbedResponse>,
      callback: sendUnaryData<EmbedResponse>,
    ) => {
      const refusal = await denied(PEER_METHODS.Embed, call.metadata);
      if (refusal) return callback(refusal);
      runHere(call, call.request, 'embedding', false, {
        onResult: (response) =>
          callback(null, {
            outcome: 'result',
            result: { response_json: JSON.stringify(response), usage: response.usage },
          }),
        onError: (error) => callback(null, { outcome: 'error', error }),
      });
    },
    GetManifest: async (
      call: ServerUnaryCall<GetManifestRequest, SignedManifest>,
      callback: sendUnaryData<SignedManifest>,
    ) => {
      const refusal = await denied(PEER_METHODS.GetManifest, call.metadata);
      if (refusal) return callback(refusal);
      const signed = hub.session(call.request.node_id)?.signedManifest;
      if (!signed) return callback({ code: status.NOT_FOUND, details: 'no such node on this replica' });
      callback(null, { manifest_json: canonicalJson(signed.manifest), signature: signed.signature });
    },
    Ping: async (call: ServerUnaryCall<PingRequest, PingResponse>, callback: sendUnaryData<PingResponse>) => {
      const refusal = await denied(PEER_METHODS.Ping, call.metadata);
      if (refusal) return callback(refusal);
      callback(null, { ts: call.request.ts, server_ts: Date.now(), id: hub.coordinatorId });
    },
  });

  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(
      `${options.host}:${options.port}`,
      options.credentials ?? ServerCredentials.createInsecure(),
      (error, bound) => (error ? reject(error) : resolve(bound)),
    ),
  );
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        clearInterval(sweep);
        server.tryShutdown(() => resolve());
        // Calls still running after a moment are ended.
        setTimeout(() => server.forceShutdown(), 2_000).unref();
      }),
  };
}

/**
 * Hub.dispatch, with a job it cannot even send (a request the job frame's schema refuses) ended by
 * onError instead of a throw out of the gRPC handler.
 */
function dispatchSafely(hub: Hub, entry: Entry, spec: JobSpec, handlers: JobHandlers): JobHandle {
  try {
    return hub.dispatch(entry, spec, handlers);
  } catch (error) {
    handlers.onError(
      invalid(error instanceof Error ? error.message.slice(0, 256) : 'the job could not be sent'),
    );
    return { jobId: '', cancel: () => {} };
  }
}

const invalid = (message: string): JobError => ({ code: 'invalid_request', message, retryable: false });
