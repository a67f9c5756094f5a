/**
 * Request bodies of the /v1 surface (TypeBox: one source for validation and the OpenAPI document).
 * Unknown OpenAI fields are tolerated (SDKs send many); the ones we act on are typed and bounded.
 */
import { type Static, Type } from '@sinclair/typebox';

/** Most messages a chat request may carry. */
export const MAX_MESSAGES = 256;
/** Most inputs one embeddings request may carry (OpenAI's limit; LangChain batches up to 1,000). */
export const MAX_EMBEDDING_INPUTS = 2048;
/** Most token ids one tokenized input may carry. */
export const MAX_INPUT_TOKENS = 65_536;

/** A text part: what a single- or multi-part `content` array carries (nodes join the texts). */
const TextPart = Type.Object(
  { type: Type.Literal('text'), text: Type.String() },
  { additionalProperties: true },
);
/** Other OpenAI part kinds pass to the node, which refuses the ones its runtime cannot take. */
const OtherPart = Type.Object(
  { type: Type.Union(['image_url', 'input_audio', 'file', 'refusal'].map((t) => Type.Literal(t))) },
  { additionalProperties: true },
);
const ContentPart = Type.Union([TextPart, OtherPart]);

/** A call an assistant turn made: its arguments are JSON text, as the model wrote them. */
const ToolCall = Type.Object(
  {
    id: Type.String({ maxLength: 256 }),
    type: Type.Literal('function'),
    function: Type.Object(
      { name: Type.String({ maxLength: 256 }), arguments: Type.String() },
      { additionalProperties: true },
    ),
  },
  { additionalProperties: true },
);

export const ChatMessage = Type.Object(
  {
    role: Type.Union(['system', 'user', 'assistant', 'tool', 'developer'].map((r) => Type.Literal(r))),
    content: Type.Union([Type.String(), Type.Array(ContentPart, { maxItems: 64 }), Type.Null()]),
    name: Type.Optional(Type.String({ maxLength: 256 })),
    /** An assistant turn that called tools (check-chat-request.ts: each tool turn answers one). */
    tool_calls: Type.Optional(Type.Array(ToolCall, { maxItems: 64 })),
    /** A tool turn: the id of the call it answers. */
    tool_call_id: Type.Optional(Type.String({ maxLength: 256 })),
  },
  { additionalProperties: true },
);

/**
 * A function the model may call. Its name's rule and the JSON Schema of its parameters are
 * checked in check-chat-request.ts (OpenAI's messages, the grammar's keywords); here, the types.
 */
const Tool = Type.Object(
  {
    type: Type.String({ maxLength: 32 }),
    function: Type.Object(
      {
        name: Type.Unknown(),
        description: Type.Optional(Type.String({ maxLength: 100_000 })),
        parameters: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
        strict: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
      },
      { additionalProperties: true },
    ),
  },
  { additionalProperties: true },
);

/**
 * `response_format`: its type is checked against OpenAI's three in check-response-format.ts (a
 * message listing them); a json_schema's members are typed here.
 */
const ResponseFormat = Type.Object(
  {
    type: Type.String({ maxLength: 32 }),
    json_schema: Type.Optional(
      Type.Object(
        {
          name: Type.Optional(Type.String({ maxLength: 256 })),
          description: Type.Optional(Type.String()),
          schema: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
          strict: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
        },
        { additionalProperties: true },
      ),
    ),
  },
  { additionalProperties: true },
);

/** USD per million tokens; null = no limit. The range is checked by ledger/money.ts (≤ 1e12). */
const Price = Type.Union([
  Type.Number({ minimum: 0 }),
  Type.String({ pattern: '^[0-9]+(\\.[0-9]+)?$', maxLength: 40 }),
  Type.Null(),
]);

const NodeNames = Type.Array(Type.String({ minLength: 1, maxLength: 128 }), { maxItems: 32 });

/**
 * OpenRouter-style routing preferences. max_price is USD per million tokens. A field we do not act
 * on is refused (400 naming it), never dropped.
 */
export const ProviderPreferences = Type.Object(
  {
    order: Type.Optional(NodeNames),
    allow_fallbacks: Type.Optional(Type.Boolean()),
    only: Type.Optional(NodeNames),
    ignore: Type.Optional(NodeNames),
    sort: Type.Optional(Type.Union(['price', 'throughput', 'latency'].map((s) => Type.Literal(s)))),
    require_parameters: Type.Optional(Type.Boolean()),
    /** "deny": no third party sees the prompt (spot checks of it stay with the coordinator). */
    data_collection: Type.Optional(Type.Union([Type.Literal('allow'), Type.Literal('deny')])),
    /** true: nothing of the request is kept once answered (job-for.ts, README "The provider object"). */
    zdr: Type.Optional(Type.Boolean()),
    /**
     * OpenRouter's classes (int4, int8, fp4, mxfp4, nvfp4, fp6, fp8, mxfp8, fp16, bf16, fp32,
     * unknown) or GGUF type names (Q4_K_M, any case); job-for.ts refuses any other, naming it.
     */
    quantizations: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 16, pattern: '^[A-Za-z0-9_]+$' }), { maxItems: 32 }),
    ),
    max_price: Type.Optional(
      Type.Object(
        { prompt: Type.Optional(Price), completion: Type.Optional(Price) },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

/** Most fallback models a request may list (OpenRouter's `models`). */
export const MAX_FALLBACK_MODELS = 8;
/** Most choices one chat or completion request may ask for (`n`). */
export const MAX_CHOICES = 4;

const Penalty = Type.Optional(Type.Union([Type.Number({ minimum: -2, maximum: 2 }), Type.Null()]));

const Stop = Type.Union([
  Type.String({ maxLength: 256 }),
  Type.Array(Type.String({ maxLength: 256 }), { maxItems: 4 }),
  Type.Null(),
]);

const Sampling = {
  model: Type.String({ minLength: 1, maxLength: 256 }),
  temperature: Type.Optional(Type.Union([Type.Number({ minimum: 0, maximum: 2 }), Type.Null()])),
  top_p: Type.Optional(Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()])),
  max_tokens: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
  max_completion_tokens: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
  stop: Type.Optional(Stop),
  seed: Type.Optional(
    Type.Union([
      Type.Integer({ minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER }),
      Type.Null(),
    ]),
  ),
  n: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: MAX_CHOICES }), Type.Null()])),
  presence_penalty: Penalty,
  frequency_penalty: Penalty,
  logprobs: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  top_logprobs: Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: 20 }), Type.Null()])),
  models: Type.Optional(
    Type.Array(Type.String({ minLength: 1, maxLength: 256 }), { minItems: 1, maxItems: MAX_FALLBACK_MODELS }),
  ),
  stream: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  stream_options: Type.Optional(
    Type.Union([
      Type.Object({ include_usage: Type.Optional(Type.Boolean()) }, { additionalProperties: true }),
      Type.Null(),
    ]),
  ),
  provider: Type.Optional(ProviderPreferences),
  user: Type.Optional(Type.String({ maxLength: 256 })),
  /** Token id → bias from -100 (banned) to 100 (forced); any other key is OpenAI's 400. */
  logit_bias: Type.Optional(
    Type.Record(Type.String({ pattern: '^[0-9]{1,10}$' }), Type.Number({ minimum: -100, maximum: 100 }), {
      additionalProperties: false,
    }),
  ),
  /** Not OpenAI's, common among compatible servers (NODE_PROTOCOL.md §9 "Sampling"): 0 keeps all. */
  top_k: Type.Optional(Type.Integer({ minimum: 0 })),
  /** Likewise; below 1 (job-for.ts: OpenAPI 3.0 has no numeric exclusiveMaximum). */
  min_p: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  response_format: Type.Optional(ResponseFormat),
};

export const ChatCompletionBody = Type.Object(
  {
    ...Sampling,
    messages: Type.Array(ChatMessage, { minItems: 1, maxItems: MAX_MESSAGES }),
    tools: Type.Optional(Type.Array(Tool, { maxItems: 128 })),
    parallel_tool_calls: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: true },
);

/** A token id of the model's vocabulary (the node checks it against its vocabulary size). */
const TokenId = Type.Integer({ minimum: 0, maximum: 2 ** 31 - 1 });

/** Most prompts one completion request may carry (one choice each, × n). */
export const MAX_PROMPTS = 16;

export const CompletionBody = Type.Object(
  {
    ...Sampling,
    // OpenAI's four forms: a string, strings (one prompt each), one prompt as token ids, or prompts
    // as token ids; empty prompts of ids are refused.
    prompt: Type.Union([
      Type.String(),
      Type.Array(Type.String(), { minItems: 1, maxItems: MAX_PROMPTS }),
      Type.Array(TokenId, { minItems: 1, maxItems: MAX_INPUT_TOKENS }),
      Type.Array(Type.Array(TokenId, { minItems: 1, maxItems: MAX_INPUT_TOKENS }), {
        minItems: 1,
        maxItems: MAX_PROMPTS,
      }),
    ]),
    /** The legacy form: each token's log-probability with this many alternatives (0…5). */
    logprobs: Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: 5 }), Type.Null()])),
  },
  { additionalProperties: true },
);

export const EmbeddingBody = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 256 }),
    // A string, strings, one input as token ids, or inputs as token ids (OpenAI's four forms); empty
    // inputs are refused, as OpenAI does.
    input: Type.Union([
      Type.String({ minLength: 1 }),
      Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: MAX_EMBEDDING_INPUTS }),
      Type.Array(TokenId, { minItems: 1, maxItems: MAX_INPUT_TOKENS }),
      Type.Array(Type.Array(TokenId, { minItems: 1, maxItems: MAX_INPUT_TOKENS }), {
        minItems: 1,
        maxItems: MAX_EMBEDDING_INPUTS,
      }),
    ]),
    encoding_format: Type.Optional(Type.Union([Type.Literal('float'), Type.Literal('base64')])),
    dimensions: Type.Optional(Type.Integer({ minimum: 1 })),
    models: Sampling.models,
    provider: Type.Optional(ProviderPreferences),
    user: Type.Optional(Type.String({ maxLength: 256 })),
  },
  { additionalProperties: true },
);

export const UsageQuery = Type.Object(
  {
    from: Type.Optional(Type.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' })),
    to: Type.Optional(Type.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' })),
  },
  { additionalProperties: false },
);

export type ChatCompletionBody = Static<typeof ChatCompletionBody>;
export type CompletionBody = Static<typeof CompletionBody>;
export type EmbeddingBody = Static<typeof EmbeddingBody>;
export type ProviderPreferencesBody = Static<typeof ProviderPreferences>;
export type UsageQuery = Static<typeof UsageQuery>;
