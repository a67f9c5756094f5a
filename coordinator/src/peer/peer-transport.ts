/**
 * Peer-RPC between coordinator replicas (@gpumesh/protocol's proto/gpumesh.proto): a replica that picked a
 * node another replica holds sends it the job over gRPC (PeerTransport, here), and the holding replica runs
 * it on the node's WebSocket and streams the chunks and the result back (peer-server.ts). The
 * replica that took the request bills it; the holding replica only carries it. The replicas of one
 * network share a peer secret (peer-plugin.ts keeps it in app_secrets), and every call carries an
 * HMAC of its method, caller, nonce and time under it (mac-peer-call.ts): an EIP-191
 * signature costs ~1 ms to make and ~5 ms to recover here, per call; the MAC, microseconds. A nonce
 * is accepted once.
 */
import { randomUUID } from 'node:crypto';
import {
  type ChannelCredentials,
  type Client,
  type ClientReadableStream,
  credentials,
  type Metadata,
  type ServiceError,
  status,
} from '@grpc/grpc-js';
import type { Hub, JobError, JobHandle, JobHandlers, JobSpec, JobUsage } from '../hub/hub.js';
import type { Entry } from '../router/pick-index.js';
import type { JobTransport } from '../router/router.js';
import { PEER_METHODS } from './load-peer-proto.js';
import { macPeerCall } from './mac-peer-call.js';
import type { EmbedRequest, EmbedResponse, InferEvent, InferRequest } from './peer-messages.js';
import { parseObject, peerRpc } from './peer-rpc.js';

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

/** Time a relayed job gets beyond the node's own timeout: the holding replica answers first. */
const RELAY_GRACE_MS = 2_000;

/** An error the holding replica could not be reached with, before any chunk: another node may serve. */
const unreachable = (detail: string): JobError => ({
  code: 'node_lost',
  message: `The replica holding the node could not be reached (${detail}).`,
  retryable: true,
});

/**
 * The peer job transport (router/router.ts): sends jobs for nodes other replicas hold to those
 * replicas. The router counts the node's slots; the holding replica counts them too.
 */
export class PeerTransport implements JobTransport {
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

  /** Any replica in the directory can be called; one that can't be reached fails as node_lost. */
  reachable(): boolean {
    return true;
  }

  /** Runs the job on the remote node of `entry`. */
  dispatch(entry: Entry, spec: JobSpec, handlers: JobHandlers): JobHandle {
    const jobId = randomUUID();
    const via = entry.node.via!;
    const { index, clock } = this.#hub;
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
      end();
    };
    const fail = (error: JobError) => finish(() => handlers.onError(error));
    const client = this.#client(via.peerUrl);
    const deadline = Date.now() + spec.timeoutMs + RELAY_GRACE_MS;
    if (spec.kind === 'verify') {
      // Verification runs on nodes connected to the replica that asks (trust/verify-completion.ts).
      queueMicrotask(() =>
        fail({ code: 'invalid_request', message: 'verify jobs are not relayed', retryable: false }),
      );
      return { jobId, cancel: () => {} };
    }
    if (spec.kind !== 'chat' && spec.kind !== 'completion' && spec.kind !== 'embedding') {
      // Peer-RPC's Infer carries chat and completion streams only: a vision or voice job goes to
      // a node another candidate's replica holds (node_lost fails over without billing).
      queueMicrotask(() =>
        fail({
          code: 'node_lost',
          message: `${spec.kind} jobs are not relayed between replicas`,
          retryable: true,
        }),
      );
      return { jobId, cancel: () => {} };
    }
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
