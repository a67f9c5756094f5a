/**
 * A minimal gpumesh node that answers every job at once with a fixed reply and exact, known usage.
 * For measuring the gateway alone and for billing and attack tests (it can lie about usage, fail,
 * die mid-stream); a stand-in, not the daemon: the daemon's own fixed-reply runtime is
 * createFixedReplyRuntime. Exported only from `@gpumesh/node/testing`, never run by gpumesh-node.
 * Speaks the protocol through @gpumesh/protocol.
 *
 * Test knobs: `failBeforeFirstToken` answers jobs with a retryable error; `dieAfterChunks` closes
 * the socket abruptly after that many chunks of a streamed job (a node killed mid-stream);
 * `chunkDelayMs` spaces chunks so a client can disconnect in the middle; `tokensPerChunk` sets
 * every chunk's `tokens` (a node that coalesces tokens), left out when unset; `claimAllCached`,
 * `cachedClaim` and `prefixCache` play a node lying about its prefix cache.
 */
import { randomUUID } from 'node:crypto';
import {
  createFrame,
  encodeFrame,
  type Frame,
  type Manifest,
  type ModelOffer,
  PROTOCOL_VERSION,
  parseFrame,
  SessionOrder,
  signChallenge,
  signManifest,
  signOwnerProof,
} from '@gpumesh/protocol';
import { sendCoalesced } from '@gpumesh/protocol/internal';
import type { Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import WebSocket from 'ws';

export type FixedReplyNodeOptions = {
  url: string;
  privateKey?: Hex;
  ownerPrivateKey?: Hex;
  models: ModelOffer[];
  /** The reply's tokens; one chunk each when streamed. */
  replyTokens?: string[];
  /** prompt_tokens reported for every job: a number, or one per message of a chat job. */
  promptTokens?: number | { perMessage: number };
  /** Claim every prompt token of a chat job as read from cache (v0.5 cached_tokens; a lying node). */
  claimAllCached?: boolean;
  /** Claim exactly this `cached_tokens` in chat results, whatever it is (with `unchecked`, any value). */
  cachedClaim?: unknown;
  /** Frames go out as JSON, unchecked by encodeFrame: a node breaking the frame rules. */
  unchecked?: boolean;
  /** v0.5 `prefixCache` in its presence frames: the prefixes it says it holds (true or not). */
  prefixCache?: { model: string; keys: string[] }[];
  /** completion_tokens reported for every chat/completion job (a lying node); default the reply's. */
  completionTokens?: number;
  failBeforeFirstToken?: boolean;
  dieAfterChunks?: number;
  chunkDelayMs?: number;
  tokensPerChunk?: number;
  capacity?: number;
};

export type FixedReplyNode = {
  readonly nodeId: Hex;
  /** Resolves once the coordinator acknowledged the manifest and presence was reported. */
  readonly ready: Promise<void>;
  /** Jobs received so far. */
  readonly jobs: number;
  /** Jobs cancelled by the coordinator. */
  readonly cancelled: string[];
  /** Graceful stop (presence offline, bye). */
  stop(): Promise<void>;
  /** Abrupt death: the socket is destroyed without a word. */
  kill(): void;
  /** Goes silent (answers nothing, sends nothing) while keeping the socket open. */
  mute(): void;
  /** Resolves when the session closes: its close code, and whether the coordinator said `bye` first. */
  readonly closed: Promise<{ code: number; bye: boolean }>;
};

export const DEFAULT_REPLY_TOKENS = ['Hello', ' from', ' a', ' fixed', ' node', '.'];

export function fixedReplyManifest(nodeId: string, models: ModelOffer[], owner?: string): Manifest {
  return {
    nodeId,
    role: 'cpu',
    hardware: { gpus: [], cpu: { model: 'bench', cores: 1, threads: 1, arch: 'x64' }, ramBytes: 1024 ** 3 },
    runtimes: [{ name: 'fixed-reply', version: '0.0.0' }],
    models,
    scopes: ['infer.chat', 'infer.text', 'infer.embed'],
    software: { name: 'gpumesh-fixed-reply-node', version: '0.0.0' },
    protocolVersion: PROTOCOL_VERSION,
    issuedAt: new Date().toISOString(),
    ...(owner ? { owner } : {}),
  };
}

export function startFixedReplyNode(options: FixedReplyNodeOptions): FixedReplyNode {
  const account = privateKeyToAccount(options.privateKey ?? generatePrivateKey());
  const owner = options.ownerPrivateKey ? privateKeyToAccount(options.ownerPrivateKey) : undefined;
  const tokens = options.replyTokens ?? DEFAULT_REPLY_TOKENS;
  const promptTokensOf = (request: Record<string, unknown>) => {
    const count = options.promptTokens ?? 10;
    if (typeof count === 'number') return count;
    return count.perMessage * (Array.isArray(request.messages) ? request.messages.length : 1);
  };
  const capacity = options.capacity ?? 64;
  const ws = new WebSocket(options.url);
  let jobs = 0;
  let inFlight = 0;
  const cancelled: string[] = [];
  const cancelledSet = new Set<string>();
  let resolveReady!: () => void;
  let rejectReady!: (e: Error) => void;
  const ready = new Promise<void>((res, rej) => {
    resolveReady = res;
    rejectReady = rej;
  });
  ready.catch(() => {});
  const send = (frame: Frame) => {
    if (ws.readyState === WebSocket.OPEN)
      sendCoalesced(ws, options.unchecked ? JSON.stringify(frame) : encodeFrame(frame));
  };
  const presence = () =>
    send(
      createFrame('presence', {
        status: inFlight >= capacity ? 'busy' : 'online',
        load: { inFlight, capacity },
        ...(options.prefixCache ? { prefixCache: options.prefixCache } : {}),
      }),
    );
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  const runJob = async (job: Extract<Frame, { type: 'job' }>) => {
    jobs++;
    inFlight++;
    try {
      if (options.failBeforeFirstToken) {
        send(
          createFrame('error', {
            jobId: job.jobId,
            code: 'runtime_error',
            message: 'failing on purpose',
            retryable: true,
          }),
        );
        return;
      }
      const created = Math.floor(Date.now() / 1000);
      const promptTokens = promptTokensOf(job.request);
      const usage = (honest: number) => {
        const completion = job.kind === 'embedding' ? honest : (options.completionTokens ?? honest);
        return {
          prompt_tokens: promptTokens,
          completion_tokens: completion,
          total_tokens: promptTokens + completion,
          ...(options.claimAllCached && job.kind === 'chat'
            ? { prompt_tokens_details: { cached_tokens: promptTokens } }
            : {}),
          ...('cachedClaim' in options && job.kind === 'chat'
            ? // Typed as the frame's number; it may be anything (the lie is the point).
              { prompt_tokens_details: { cached_tokens: options.cachedClaim as number } }
            : {}),
        };
      };
      if (job.kind === 'embedding') {
        const input = job.request.input;
        const inputs = Array.isArray(input) ? input : [input];
        const response = {
          object: 'list',
          model: job.model,
          data: inputs.map((_, index) => ({ object: 'embedding', index, embedding: [0.1, 0.2, 0.3] })),
          usage: usage(0),
        };
        send(createFrame('result', { jobId: job.jobId, response }));
        return;
      }
      const max = typeof job.request.max_tokens === 'number' ? job.request.max_tokens : tokens.length;
      const reply = tokens.slice(0, Math.min(max, tokens.length));
      const id = `${job.kind === 'chat' ? 'chatcmpl' : 'cmpl'}-${randomUUID()}`;
      if (job.stream) {
        for (let i = 0; i < reply.length; i++) {
          if (options.chunkDelayMs) await sleep(options.chunkDelayMs);
          if (cancelledSet.has(job.jobId)) {
            send(
              createFrame('error', {
                jobId: job.jobId,
                code: 'job_cancelled',
                message: 'cancelled',
                retryable: false,
                // What it used so far (NODE_PROTOCOL.md §9): the prompt, and one token per chunk sent.
                usage: { prompt_tokens: promptTokens, completion_tokens: i, total_tokens: promptTokens + i },
              }),
            );
            return;
          }
          if (options.dieAfterChunks !== undefined && i >= options.dieAfterChunks) {
            ws.terminate();
            return;
          }
          const chunk =
            job.kind === 'chat'
              ? {
                  id,
                  object: 'chat.completion.chunk',
                  created,
                  model: job.model,
                  choices: [
                    {
                      index: 0,
                      delta: i === 0 ? { role: 'assistant', content: reply[i] } : { content: reply[i] },
                      finish_reason: null,
                    },
                  ],
                }
              : {
                  id,
                  object: 'text_completion',
                  created,
                  model: job.model,
                  choices: [{ index: 0, text: reply[i], finish_reason: null }],
                };
          const tokens = options.tokensPerChunk;
          send(
            createFrame('chunk', {
              jobId: job.jobId,
              seq: i,
              chunk,
              ...(tokens === undefined ? {} : { tokens }),
            }),
          );
        }
      }
      const text = reply.join('');
      const finish = reply.length < tokens.length ? 'length' : 'stop';
      const response =
        job.kind === 'chat'
          ? {
              id,
              object: 'chat.completion',
              created,
              model: job.model,
              choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: finish }],
              usage: usage(reply.length),
            }
          : {
              id,
              object: 'text_completion',
              created,
              model: job.model,
              choices: [{ index: 0, text, finish_reason: finish }],
              usage: usage(reply.length),
            };
      send(createFrame('result', { jobId: job.jobId, response }));
    } finally {
      inFlight--;
    }
  };

  ws.on('open', () =>
    send(
      createFrame('hello', {
        nodeId: account.address,
        role: 'cpu',
        versions: [PROTOCOL_VERSION],
        software: { name: 'gpumesh-fixed-reply-node', version: '0.0.0' },
      }),
    ),
  );
  let muted = false;
  // Frames the protocol does not allow now are ignored, like malformed ones.
  const order = new SessionOrder('node');
  ws.on('message', async (data, binary) => {
    if (muted) return;
    let frame: Frame;
    try {
      frame = parseFrame(data as Buffer, { binary });
      order.receive(frame.type);
    } catch {
      return;
    }
    switch (frame.type) {
      case 'challenge': {
        const signature = await signChallenge(frame, account);
        const proof = owner ? await signOwnerProof(account.address, owner) : undefined;
        send(createFrame('auth', { signature, ...(proof ? { owner: proof } : {}) }));
        return;
      }
      case 'welcome': {
        const manifest = fixedReplyManifest(account.address, options.models, owner?.address);
        send(createFrame('manifest', { manifest, signature: await signManifest(manifest, account) }));
        return;
      }
      case 'manifest_ack':
        presence();
        resolveReady();
        return;
      case 'ping':
        send(createFrame('pong', { ts: frame.ts }));
        return;
      case 'job':
        void runJob(frame);
        return;
      case 'cancel':
        cancelled.push(frame.jobId);
        cancelledSet.add(frame.jobId);
        return;
      case 'error':
        if (!frame.jobId) rejectReady(new Error(`coordinator error: ${frame.code}`));
        return;
      case 'bye':
        byeReceived = true;
        return;
      default:
        return;
    }
  });
  let byeReceived = false;
  const closed = new Promise<{ code: number; bye: boolean }>((resolve) =>
    ws.on('close', (code) => resolve({ code, bye: byeReceived })),
  );
  ws.on('close', () => rejectReady(new Error('closed before ready')));
  ws.on('error', () => {});

  return {
    nodeId: account.address,
    ready,
    get jobs() {
      return jobs;
    },
    cancelled,
    async stop() {
      if (ws.readyState === WebSocket.OPEN) {
        send(createFrame('presence', { status: 'offline', load: { inFlight: 0, capacity } }));
        send(createFrame('bye', { reason: 'shutdown' }));
        ws.close(1000, 'bye');
      }
      if (ws.readyState !== WebSocket.CLOSED) await new Promise((r) => ws.once('close', r));
    },
    kill() {
      ws.terminate();
    },
    mute() {
      muted = true;
    },
    closed,
  };
}

/** A USD-priced offer: prices in nanousd per million tokens. */
export function usdOffer(
  id: string,
  inputPerMTok: bigint,
  outputPerMTok: bigint,
  extra: Partial<ModelOffer> = {},
): ModelOffer {
  return {
    id,
    family: 'chat',
    contextLength: 4096,
    maxConcurrency: 64,
    price: {
      currency: 'USD',
      inputPerMTok: inputPerMTok.toString(),
      outputPerMTok: outputPerMTok.toString(),
    },
    ...extra,
  };
}
