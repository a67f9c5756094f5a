import { canonicalJson } from '@gpumesh/protocol';
import {
  Metadata,
  Server,
  ServerCredentials,
  type ServerUnaryCall,
  type ServerWritableStream,
  type ServiceError,
  type sendUnaryData,
  status,
} from '@grpc/grpc-js';
import type { Hub, JobError, JobHandle, JobHandlers, JobSpec } from '../hub/hub.js';
import type { Entry } from '../router/pick-index.js';
import type { Router, Slot } from '../router/router.js';
import { PEER_METHODS } from './load-peer-proto.js';
import type {
  EmbedRequest,
  EmbedResponse,
  GetManifestRequest,
  InferEvent,
  InferRequest,
  PingRequest,
  PingResponse,
  SignedManifest,
} from './peer-messages.js';
import { parseObject, peerRpc } from './peer-rpc.js';
import { verifyPeerCall } from './verify-peer-call.js';

export type PeerServerOptions = {
  hub: Hub;
  /** Where the relayed jobs go (it counts the nodes' slots). */
  router: Router;
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
   * Runs a relayed job on a node held here, with the router's handlers: a job that cannot start
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
    // The node's slots are counted here, where it is held: a replica relaying to a full node is
    // told so (retryable, like the node's own refusal).
    const slot = options.router.claim(entry);
    if (!slot) {
      handlers.onError({ code: 'overloaded', message: 'The node is at capacity.', retryable: true });
      return;
    }
    const handle = dispatchSafely(options.router, slot, spec, handlers);
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
 * Router.dispatch, with a job it cannot even send (a request the job frame's schema refuses) ended by
 * onError instead of a throw out of the gRPC handler.
 */
function dispatchSafely(router: Router, slot: Slot, spec: JobSpec, handlers: JobHandlers): JobHandle {
  try {
    return router.dispatch(slot, spec, handlers);
  } catch (error) {
    handlers.onError(
      invalid(error instanceof Error ? error.message.slice(0, 256) : 'the job could not be sent'),
    );
    return { jobId: '', cancel: () => {} };
  }
}

const invalid = (message: string): JobError => ({ code: 'invalid_request', message, retryable: false });
