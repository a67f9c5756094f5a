/**
 * Every WebSocket frame of the node protocol, as TypeBox schemas: one source for the TypeScript
 * types and the JSON Schemas. A frame is a JSON object with `v` (protocol version, 0) and `type`
 * (the discriminator). Receivers ignore fields they do not know.
 */
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { ManifestSchema } from './manifest.js';
import { PrefixCacheSchema } from './prefix-keys.js';
import { Address, Count, Id, Role, Signature, Software, Text, Timestamp } from './primitives.js';
import { GrantedScopeSchema, ScopeSchema } from './scopes.js';
import { TIER_NAMES } from './tiers.js';
import { Usage } from './usage.js';

export { Usage };

const V = Type.Literal(0, { description: 'protocol version of the frame' });

function frame<T extends string, P extends Record<string, TSchema>>(
  type: T,
  properties: P,
  description: string,
) {
  return Type.Object({ v: V, type: Type.Literal(type), ...properties }, { $id: type, description });
}

/** An arbitrary JSON object (OpenAI request and response bodies). */
const JsonObject = Type.Record(Type.String(), Type.Unknown());

export const PRESENCE_STATUSES = ['online', 'busy', 'draining', 'offline'] as const;
export type PresenceStatus = (typeof PRESENCE_STATUSES)[number];

/** The most token ids a result's `tokenIds` or a verify job may carry, per list. */
export const MAX_VERIFY_TOKENS = 131_072;
const TokenId = Type.Integer({ minimum: 0, maximum: 2 ** 31 - 1 });

/** A job's sampling settings (NODE_PROTOCOL.md §9 "Sampling"), as a `verify` job carries them. */
export const SamplingSchema = Type.Object(
  {
    temperature: Type.Number({ minimum: 0, maximum: 2 }),
    topK: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
    topP: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    minP: Type.Optional(Type.Number({ minimum: 0, exclusiveMaximum: 1 })),
    presencePenalty: Type.Optional(Type.Number({ minimum: -2, maximum: 2 })),
    frequencyPenalty: Type.Optional(Type.Number({ minimum: -2, maximum: 2 })),
    logitBias: Type.Optional(
      Type.Record(Type.String({ pattern: '^[0-9]{1,10}$' }), Type.Number({ minimum: -100, maximum: 100 }), {
        maxProperties: 300,
      }),
    ),
  },
  { additionalProperties: false },
);

/** A `verify` job's request (NODE_PROTOCOL.md "Verification"). */
export const VerifyRequest = Type.Object(
  {
    promptTokenIds: Type.Array(TokenId, { minItems: 1, maxItems: MAX_VERIFY_TOKENS }),
    completionTokenIds: Type.Array(TokenId, { minItems: 1, maxItems: MAX_VERIFY_TOKENS }),
    topK: Type.Integer({ minimum: 1, maximum: 100 }),
    /** v0.1: the weights the verifier must hold; another file under `model`'s id is model_not_found. */
    sha256: Type.Optional(Type.String({ pattern: '^[0-9a-f]{64}$' })),
    /**
     * v0.2: the generator's sampling settings; the answer then describes each position's processed
     * distribution (NODE_PROTOCOL.md §9 "Sampling").
     */
    sampling: Type.Optional(SamplingSchema),
  },
  { additionalProperties: false },
);
export type VerifyRequest = Static<typeof VerifyRequest>;

/** A `verify` job's `result.response` (NODE_PROTOCOL.md "Verification"). */
export const VerificationResponse = Type.Object({
  object: Type.Literal('verification'),
  model: Type.String(),
  /** Natural log-probability of each completion token, 4 decimals (−1e9: no weight at all). */
  logprobs: Type.Array(Type.Number({ maximum: 0 }), { maxItems: MAX_VERIFY_TOKENS }),
  /** "1" where that completion token was among the `topK` most likely, else "0". */
  in_top_k: Type.String({ pattern: '^[01]*$', maxLength: MAX_VERIFY_TOKENS }),
  /** v0.2, when the request had `sampling`: ln p of each token under the processed distribution (null: not kept). */
  sampled_logprobs: Type.Optional(
    Type.Array(Type.Union([Type.Number({ maximum: 0 }), Type.Null()]), { maxItems: MAX_VERIFY_TOKENS }),
  ),
  /** v0.2: each position's entropy (nats) and the variance of −ln p under the processed distribution. */
  entropy: Type.Optional(Type.Array(Type.Number({ minimum: 0 }), { maxItems: MAX_VERIFY_TOKENS })),
  entropy_var: Type.Optional(Type.Array(Type.Number({ minimum: 0 }), { maxItems: MAX_VERIFY_TOKENS })),
  /** v0.2: the processed distribution's mass on its `topK` most likely tokens. */
  top_k_mass: Type.Optional(
    Type.Array(Type.Number({ minimum: 0, maximum: 1 }), { maxItems: MAX_VERIFY_TOKENS }),
  ),
  /** v0.2: 0 when the token was kept, else how far (nats, before temperature) below the lowest kept logit. */
  edge_gaps: Type.Optional(Type.Array(Type.Number({ minimum: 0 }), { maxItems: MAX_VERIFY_TOKENS })),
  /** v0.2: the completion's token ids detokenized (so the coordinator can hold them to the delivered text). */
  completion_text: Type.Optional(Type.String({ maxLength: MAX_VERIFY_TOKENS * 64 })),
  /** v0.2: the prompt's token ids detokenized (held to the request's messages or prompt). */
  prompt_text: Type.Optional(Type.String({ maxLength: MAX_VERIFY_TOKENS * 64 })),
  usage: Usage,
});
export type VerificationResponse = Static<typeof VerificationResponse>;

/**
 * A `job`'s `continueFrom` (v0.3): the text of the answer so far, to be continued; v0.4 adds the
 * token ids the client's text was sampled as, which the node evaluates as they are.
 */
export const ContinueFrom = Type.Object(
  {
    text: Type.String({ minLength: 1 }),
    /** v0.4: choice 0's completion token ids so far, their text `text` (NODE_PROTOCOL.md §9). */
    tokenIds: Type.Optional(Type.Array(TokenId, { minItems: 1, maxItems: MAX_VERIFY_TOKENS })),
  },
  { additionalProperties: false },
);
export type ContinueFrom = Static<typeof ContinueFrom>;

export const JOB_KINDS = [
  'chat',
  'completion',
  'embedding',
  'verify',
  'vision',
  'transcription',
  'translation',
  'speech',
] as const;
export type JobKind = (typeof JOB_KINDS)[number];

export const HelloFrame = frame(
  'hello',
  {
    nodeId: Address,
    role: Role,
    /** Every protocol version the node speaks. */
    versions: Type.Array(Count, { minItems: 1, maxItems: 16 }),
    software: Software,
  },
  'node → coordinator, first frame of a session',
);

export const ChallengeFrame = frame(
  'challenge',
  {
    nonce: Type.String({ pattern: '^[0-9a-f]{32,128}$' }),
    issuedAt: Timestamp,
    expiresAt: Timestamp,
    coordinatorId: Text(128),
  },
  'coordinator → node, answer to hello',
);

export const AuthFrame = frame(
  'auth',
  {
    /** EIP-191 signature by the node key of `challengeText(challenge, nodeId)`. */
    signature: Signature,
    /** The owner wallet (staker) and its EIP-191 signature of `ownerProofText(nodeId)`. */
    owner: Type.Optional(Type.Object({ address: Address, signature: Signature })),
  },
  'node → coordinator, answer to challenge',
);

export const WelcomeFrame = frame(
  'welcome',
  {
    version: Count,
    sessionId: Id,
    heartbeatIntervalMs: Type.Integer({ minimum: 1 }),
    ttlMs: Type.Integer({ minimum: 1 }),
    maxFrameBytes: Type.Integer({ minimum: 1 }),
    tier: Type.Union(TIER_NAMES.map((t) => Type.Literal(t))),
    /** Scopes this node may claim at its tier; a node ignores values it does not know (v0.2). */
    scopes: Type.Array(GrantedScopeSchema, { maxItems: 64 }),
    /**
     * v0.1: the most jobs this coordinator runs at the node at once at its tier (the node's
     * capacity is min(its own, this); it reports `busy` at that many).
     */
    maxConcurrentJobs: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  'coordinator → node, the node is authenticated',
);

export const ManifestFrame = frame(
  'manifest',
  {
    manifest: ManifestSchema,
    /** EIP-191 signature by the node key of `canonicalJson(manifest)`. */
    signature: Signature,
  },
  'node → coordinator, right after welcome; again whenever the manifest changes',
);

export const ManifestAckFrame = frame(
  'manifest_ack',
  {
    /** Scopes granted: the claimed scopes the tier allows. */
    scopes: Type.Array(ScopeSchema),
    /** Ids of the models the coordinator will route to this node. */
    models: Type.Array(Type.String()),
  },
  'coordinator → node, the manifest is accepted',
);

export const PresenceFrame = frame(
  'presence',
  {
    status: Type.Union(PRESENCE_STATUSES.map((s) => Type.Literal(s))),
    load: Type.Object({ inFlight: Count, capacity: Count }),
    /** v0.5: the prefix keys the node holds in KV now, per model, most recent first (§9 "Prefix cache"). */
    prefixCache: Type.Optional(PrefixCacheSchema),
  },
  'node → coordinator, on every change of status or load',
);

export const PingFrame = frame(
  'ping',
  {
    ts: Count,
    /** v0.5, node → coordinator: as `presence.prefixCache`, refreshed every heartbeat. */
    prefixCache: Type.Optional(PrefixCacheSchema),
  },
  'either way; the node sends one every heartbeatIntervalMs, the peer answers pong',
);

export const PongFrame = frame('pong', { ts: Count }, 'either way, echoes the ping ts');

export const JobFrame = frame(
  'job',
  {
    jobId: Id,
    kind: Type.Union(JOB_KINDS.map((k) => Type.Literal(k))),
    model: Type.String({ minLength: 1, maxLength: 256 }),
    /** The OpenAI request body: chat.completions, completions or embeddings. */
    request: JsonObject,
    stream: Type.Boolean(),
    timeoutMs: Type.Integer({ minimum: 1 }),
    /**
     * v0.3: the answer so far (the first choice's text as the client has it), which the node
     * continues rather than begins; sent only with `chat` and `completion` jobs, only to a model
     * whose offer says `continues` (NODE_PROTOCOL.md §9 "Continuing an answer").
     */
    continueFrom: Type.Optional(ContinueFrom),
  },
  'coordinator → node, run one inference',
);

export const ChunkFrame = frame(
  'chunk',
  {
    jobId: Id,
    /** 0, 1, 2 … per job. */
    seq: Count,
    /** One OpenAI stream chunk (`chat.completion.chunk` or `text_completion`). */
    chunk: JsonObject,
    /**
     * Completion tokens this chunk carries (a node may coalesce several tokens into one chunk). A
     * coordinator bills a stream cut short by these; without it, one per chunk with text.
     */
    tokens: Type.Optional(Count),
    /**
     * v0.4: the ids of the `tokens` this chunk carries, in order (as many as `tokens`): the
     * coordinator continues an answer cut short from the ids the client got (NODE_PROTOCOL.md §9
     * "Continuing an answer").
     */
    tokenIds: Type.Optional(Type.Array(TokenId, { maxItems: MAX_VERIFY_TOKENS })),
  },
  'node → coordinator, one streamed piece of a stream: true job',
);

export const ResultFrame = frame(
  'result',
  {
    jobId: Id,
    /** The full OpenAI response, with usage. */
    response: Type.Intersect([JsonObject, Type.Object({ usage: Usage })]),
    /**
     * Optional, chat and completion jobs: the token ids the node evaluated and sampled (choice 0),
     * so the coordinator can have the completion verified (NODE_PROTOCOL.md "Verification").
     */
    tokenIds: Type.Optional(
      Type.Object(
        {
          prompt: Type.Array(TokenId, { maxItems: MAX_VERIFY_TOKENS }),
          completion: Type.Array(TokenId, { maxItems: MAX_VERIFY_TOKENS }),
        },
        { additionalProperties: false },
      ),
    ),
  },
  'node → coordinator, the end of a job (after its chunks when streamed)',
);

export const ErrorFrame = frame(
  'error',
  {
    /** Set when the error concerns one job. */
    jobId: Type.Optional(Id),
    /** A registry code (see PROTOCOL_ERRORS); receivers treat unknown codes as internal_error. */
    code: Type.String({ pattern: '^[a-z][a-z0-9_]{0,63}$' }),
    message: Text(1024),
    retryable: Type.Boolean(),
    /**
     * Optional, node → coordinator, on a job's error (job_cancelled included): the tokens the job
     * used before it ended. The coordinator bills a cut-short request's prompt as the lower of
     * this `prompt_tokens` and its own bound (NODE_PROTOCOL.md §9, "Billing a job cut short").
     */
    usage: Type.Optional(Usage),
  },
  'either way',
);

export const CancelFrame = frame(
  'cancel',
  { jobId: Id, reason: Type.Optional(Text(256)) },
  'coordinator → node, stop a job',
);

export const DrainFrame = frame(
  'drain',
  { deadlineMs: Type.Integer({ minimum: 0 }) },
  'coordinator → node, finish in-flight jobs, take no new ones, then leave',
);

export const ByeFrame = frame(
  'bye',
  { reason: Text(256) },
  'either way, the last frame before a normal close',
);

/** Every frame schema by its type. */
export const FRAME_SCHEMAS = {
  hello: HelloFrame,
  challenge: ChallengeFrame,
  auth: AuthFrame,
  welcome: WelcomeFrame,
  manifest: ManifestFrame,
  manifest_ack: ManifestAckFrame,
  presence: PresenceFrame,
  ping: PingFrame,
  pong: PongFrame,
  job: JobFrame,
  chunk: ChunkFrame,
  result: ResultFrame,
  error: ErrorFrame,
  cancel: CancelFrame,
  drain: DrainFrame,
  bye: ByeFrame,
} as const;

export type FrameType = keyof typeof FRAME_SCHEMAS;
export const FRAME_TYPES = Object.keys(FRAME_SCHEMAS) as FrameType[];

/** The union of every frame, discriminated by `type`. */
export const FrameSchema = Type.Union(Object.values(FRAME_SCHEMAS));

export type HelloFrame = Static<typeof HelloFrame>;
export type ChallengeFrame = Static<typeof ChallengeFrame>;
export type AuthFrame = Static<typeof AuthFrame>;
export type WelcomeFrame = Static<typeof WelcomeFrame>;
export type ManifestFrame = Static<typeof ManifestFrame>;
export type ManifestAckFrame = Static<typeof ManifestAckFrame>;
export type PresenceFrame = Static<typeof PresenceFrame>;
export type PingFrame = Static<typeof PingFrame>;
export type PongFrame = Static<typeof PongFrame>;
export type JobFrame = Static<typeof JobFrame>;
export type ChunkFrame = Static<typeof ChunkFrame>;
export type ResultFrame = Static<typeof ResultFrame>;
export type ErrorFrame = Static<typeof ErrorFrame>;
export type CancelFrame = Static<typeof CancelFrame>;
export type DrainFrame = Static<typeof DrainFrame>;
export type ByeFrame = Static<typeof ByeFrame>;
export type Frame = Static<typeof FrameSchema>;
/** The frame of one type. */
export type FrameOf<T extends FrameType> = Extract<Frame, { type: T }>;

/** Frames a node may send and frames a coordinator may send. */
export const NODE_FRAME_TYPES = [
  'hello',
  'auth',
  'manifest',
  'presence',
  'ping',
  'pong',
  'chunk',
  'result',
  'error',
  'bye',
] as const satisfies readonly FrameType[];
export const COORDINATOR_FRAME_TYPES = [
  'challenge',
  'welcome',
  'manifest_ack',
  'ping',
  'pong',
  'job',
  'error',
  'cancel',
  'drain',
  'bye',
] as const satisfies readonly FrameType[];
