/**
 * The types of one routed request, in a module of their own: the route that builds the job, the
 * attempts that run it and the settlement that bills it all share them.
 */
import type { JobKind } from '@gpumesh/protocol';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { ApiError } from '../errors.js';
import type { Ledger } from '../ledger/ledger.js';
import type { RequestOrigin, SettleOutcome } from '../ledger/types.js';
import type { JobTokenIds, JobUsage } from './jobs.js';
import type { Entry, ProviderPreferences } from './pick-index.js';
import type { Router } from './router.js';

export type RouterSettings = {
  platformFeeBps: number;
  jobTimeoutMs: number;
  maxAttempts: number;
  /** First-token deadline (see firstSignDeadlineMs). */
  ttftMs: number;
  prefillMsPerToken: number;
  minTokensPerSecond: number;
};

/**
 * Per-key credit limits (keys/key-limits.ts): admits a request's worst case against its key's
 * limit; `done` gives it back once the settlement committed.
 */
export type KeyLimitGate = {
  admit(keyId: string, limitNano: bigint, amountNano: bigint): Promise<{ done(): void }>;
};

/**
 * New nodes' capped share of a model's traffic (trust/standing/probation.ts): the candidates put in the
 * order they may take the request, and each request a node took noted.
 */
export type TrafficShare = {
  order(model: string, candidates: readonly Entry[]): readonly Entry[];
  note(model: string, nodeId: string): void;
};

/** A /metrics counter (prom-client's Counter is one). */
export type MetricCounter<Label extends string> = {
  inc(labels: Partial<Record<Label, string>>, value?: number): void;
};

/** What the router counts for /metrics (metrics/create-metrics.ts: the app's registry). */
export type RouterMetrics = {
  readonly tokens: MetricCounter<'model' | 'kind'>;
  readonly creditsSpentNano: MetricCounter<'model'>;
  readonly failovers: MetricCounter<'model'>;
  readonly usageClamped: MetricCounter<'kind'>;
};

/** A completion the client got, with what the node claimed for it: what a spot check checks (trust/). */
export type CheckedJob = {
  kind: string;
  jobId: string;
  /** The OpenAI request body the node got. */
  request: Record<string, unknown>;
  usage: { prompt_tokens: number; completion_tokens: number };
  tokenIds: JobTokenIds | undefined;
  /** The text the client got for choice 0 (undefined: not text, e.g. a tool call). */
  delivered: string | undefined;
  /**
   * The client asked that no third party see the prompt (OpenRouter's provider.data_collection
   * "deny", or zdr): only the coordinator verifies it, in memory, keeping the verdict's numbers.
   */
  private?: boolean;
  /**
   * A continued answer (continued-ids.ts): the completion's first `scoredFrom` tokens are another
   * node's, evaluated as context; the evidence counts this node's, after them.
   */
  scoredFrom?: number;
};

export type RouteDeps = {
  db: Kysely<Database>;
  ledger: Ledger;
  router: Router;
  keyLimits: KeyLimitGate;
  settings: RouterSettings;
  clock: { now(): number };
  probation?: TrafficShare;
  /** Offered each completion the client got, with what the node claimed for it (trust/ spot checks). */
  spotCheck?: (entry: Entry, job: () => CheckedJob) => void;
  /**
   * Told each client chat and completion request once, as its first node gets it (trust/: canaries
   * are made like traffic, and replay it); `shareable` false when the client denied data
   * collection (its text is then never learnt or replayed, only its shape noted).
   */
  noteTraffic?(traffic: NotedTraffic): void;
  /** Tokens, credits spent and failovers for /metrics (the app's registry). */
  metrics?: RouterMetrics;
  /** Where a settlement that failed after the answer went out, and a node's inflated usage, are reported. */
  log?: {
    error(details: Record<string, unknown>, message: string): void;
    warn(details: Record<string, unknown>, message: string): void;
  };
};

/** A client job as its first node got it (RouteDeps.noteTraffic). */
export type NotedTraffic = {
  model: string;
  kind: 'chat' | 'completion';
  request: Record<string, unknown>;
  stream: boolean;
  shareable: boolean;
  node: { nodeId: string; owner?: string | null };
  /** Every node the request went to, so far and later (hedges, failovers): a live set. */
  tried: ReadonlySet<string>;
};

export type InferenceJob = {
  requestId: string;
  userId: string;
  keyId: string | null;
  /** The key's credit limit, nanousd (null: none). */
  keyLimitNano: bigint | null;
  kind: JobKind;
  model: string;
  /** The OpenAI request body the node receives (our routing fields removed, max_tokens explicit). */
  nodeRequest: Record<string, unknown>;
  stream: boolean;
  /** An upper bound of the prompt's tokens, for the worst-case reservation. */
  promptTokensBound: number;
  /** The completion tokens the node may produce at most, per choice (0 for embeddings). */
  maxTokens: number;
  /** Choices asked for (`n`): the worst case and the completion bound count each. */
  choices: number;
  /** performance.now() when the request arrived (the generation's latency counts from it). */
  startedAt: number;
  /** Set when the winning attempt showed its first sign of work: ms since `startedAt`. */
  firstTokenMs?: number;
  /** Streamed: end with a usage chunk (`choices: []`, usage with its cost), as stream_options.include_usage asks. */
  includeUsage: boolean;
  provider: ProviderPreferences | undefined;
  /**
   * The client's connection, for a non-streamed request (a streamed one watches its `sink`): when
   * the client leaves, the job is cancelled (NODE_PROTOCOL.md §9) and billed as cut short.
   */
  client?: ClientPresence;
  /** Set on the job that continues an answer another node began (continue-stream.ts). */
  continuation?: Continuation;
  /** Who sent the request (v1/request-origin.ts), kept with its usage row; absent under zdr. */
  origin?: RequestOrigin;
  /**
   * A chat job's prefix keys (@gpumesh/protocol's prefixKeys: one per message boundary): what
   * the coordinator records it sent (sent-prefixes.ts), bounds cached tokens by and routes by.
   */
  prefixKeys?: readonly string[];
};

/** What a continuing job carries: the answer so far and the weights it was made with. */
export type Continuation = {
  /** The text the client has (choice 0's): the job's `continueFrom`. */
  readonly text: string;
  /** Its tokens' ids, when every chunk carried them (v0.4): the node replays them as they are. */
  readonly tokenIds?: readonly number[];
  /** The weights file of the node that began the answer: a node continuing it claims the same. */
  readonly sha256: string;
};

/** Tells when the client went away. */
export type ClientPresence = {
  /** True once the client went away. */
  readonly closed: boolean;
  /** Calls `fn` when the client goes away (at once if it already has). */
  onClose(fn: () => void): void;
};

/** Where a streamed answer goes. `start` is called once, before the first chunk (headers). */
export type StreamSink = {
  start(nodeId: string): void;
  write(chunk: Record<string, unknown>): void;
  /** Ends the stream: a last chunk (or none), or an error event; then [DONE]. */
  finish(final: Record<string, unknown> | { error: ReturnType<ApiError['toBody']>['error'] } | null): void;
  /** True once the client went away. */
  readonly closed: boolean;
  /** Calls `fn` when the client goes away mid-stream. */
  onClose(fn: () => void): void;
};

export type UsageWithCost = JobUsage & {
  cost: number;
  /** Of prompt_tokens, those billed at the node's cached price (text answers). */
  prompt_tokens_details?: { cached_tokens: number };
};

export type InferenceResult = {
  nodeId: string;
  /** The node's response with usage.cost added (non-streamed requests). */
  response: Record<string, unknown> & { usage: UsageWithCost };
  /** The charge: known when the answer goes out, committed by `settlement`. */
  chargedNano: bigint;
  /** Commits the charge, the provider's credit and the usage row (one transaction). */
  settlement: Promise<SettleOutcome>;
};
