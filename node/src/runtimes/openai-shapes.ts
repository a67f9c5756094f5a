import { randomBytes } from 'node:crypto';
import { type Static, Type } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { NodeError } from '../errors.js';
import type { JobKind, JsonObject, Usage } from './runtime.js';

const TextPart = Type.Object({ type: Type.Literal('text'), text: Type.String() });
const ToolCall = Type.Object({
  id: Type.String(),
  type: Type.Literal('function'),
  function: Type.Object({ name: Type.String(), arguments: Type.String() }),
});
const Message = Type.Object({
  role: Type.Union(['system', 'developer', 'user', 'assistant', 'tool'].map((role) => Type.Literal(role))),
  content: Type.Union([Type.String(), Type.Array(TextPart), Type.Null()]),
  /** An assistant turn that called tools. */
  tool_calls: Type.Optional(Type.Array(ToolCall, { maxItems: 64 })),
  /** A tool turn: the call it answers. */
  tool_call_id: Type.Optional(Type.String()),
});
const Tool = Type.Object({
  type: Type.Literal('function'),
  function: Type.Object({
    name: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' }),
    description: Type.Optional(Type.String()),
    parameters: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    strict: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  }),
});
const ToolChoice = Type.Union([
  Type.Literal('none'),
  Type.Literal('auto'),
  Type.Literal('required'),
  Type.Object({ type: Type.Literal('function'), function: Type.Object({ name: Type.String() }) }),
]);
const Sampling = {
  max_tokens: Type.Optional(Type.Integer({ minimum: 1 })),
  max_completion_tokens: Type.Optional(Type.Integer({ minimum: 1 })),
  temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
  /** 0 keeps only the most likely token (llama.cpp keeps at least one), as OpenAI's top_p 0. */
  top_p: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  /** Not OpenAI's, but common among compatible servers: keep the k most likely (0: all). NODE_PROTOCOL.md §9 "Sampling". */
  top_k: Type.Optional(Type.Integer({ minimum: 0 })),
  /** Likewise: keep tokens at least this times as likely as the most likely (0: all). */
  min_p: Type.Optional(Type.Number({ minimum: 0, exclusiveMaximum: 1 })),
  seed: Type.Optional(Type.Integer()),
  stop: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String(), { maxItems: 4 }), Type.Null()])),
  /** Token id → bias in [-100, 100]; -100 bans the token, 100 forces it. */
  logit_bias: Type.Optional(
    Type.Record(Type.String({ pattern: '^[0-9]+$' }), Type.Number({ minimum: -100, maximum: 100 })),
  ),
  /** Choices sampled one after another (seed + i when seeded); at most 4, as the coordinator. */
  n: Type.Optional(Type.Integer({ minimum: 1, maximum: 4 })),
  presence_penalty: Type.Optional(Type.Number({ minimum: -2, maximum: 2 })),
  frequency_penalty: Type.Optional(Type.Number({ minimum: -2, maximum: 2 })),
  response_format: Type.Optional(
    Type.Union([
      Type.Object({ type: Type.Literal('text') }),
      Type.Object({ type: Type.Literal('json_object') }),
      Type.Object({
        type: Type.Literal('json_schema'),
        json_schema: Type.Object({
          name: Type.Optional(Type.String()),
          schema: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
          strict: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
        }),
      }),
    ]),
  ),
};
export const ChatRequest = Type.Object({
  messages: Type.Array(Message, { minItems: 1 }),
  /** Log-probabilities of the content's tokens, with `top_logprobs` alternatives each (0…20). */
  logprobs: Type.Optional(Type.Boolean()),
  top_logprobs: Type.Optional(Type.Integer({ minimum: 0, maximum: 20 })),
  tools: Type.Optional(Type.Array(Tool, { maxItems: 128 })),
  tool_choice: Type.Optional(ToolChoice),
  parallel_tool_calls: Type.Optional(Type.Boolean()),
  ...Sampling,
});
/** Most prompts one completion request may carry (one choice each, × n); as the coordinator. */
export const MAX_PROMPTS = 16;
const TokenIds = Type.Array(Type.Integer({ minimum: 0 }), { minItems: 1 });
export const CompletionRequest = Type.Object({
  /** A string, strings (one prompt each), one prompt as token ids, or prompts as token ids. */
  prompt: Type.Union([
    Type.String(),
    Type.Array(Type.String(), { minItems: 1, maxItems: MAX_PROMPTS }),
    TokenIds,
    Type.Array(TokenIds, { minItems: 1, maxItems: MAX_PROMPTS }),
  ]),
  /** The legacy form: log-probabilities of each token with this many alternatives (0…5). */
  logprobs: Type.Optional(Type.Integer({ minimum: 0, maximum: 5 })),
  ...Sampling,
});
export const EmbeddingRequest = Type.Object({
  /** A string, strings, one input as token ids, or inputs as token ids (OpenAI's four forms). */
  input: Type.Union([
    Type.String({ minLength: 1 }),
    Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: 2048 }),
    TokenIds,
    Type.Array(TokenIds, { minItems: 1, maxItems: 2048 }),
  ]),
  /** Truncate each vector to this many dimensions, renormalised (as OpenAI's text-embedding-3). */
  dimensions: Type.Optional(Type.Integer({ minimum: 1 })),
});
export type ChatRequest = Static<typeof ChatRequest>;
export type CompletionRequest = Static<typeof CompletionRequest>;
export type EmbeddingRequest = Static<typeof EmbeddingRequest>;
export type ChatMessage = Static<typeof Message>;

const checkers = {
  chat: TypeCompiler.Compile(ChatRequest),
  completion: TypeCompiler.Compile(CompletionRequest),
  embedding: TypeCompiler.Compile(EmbeddingRequest),
};

/**
 * Options that change the answer which this node's runtimes do not implement: a request that sets
 * one is refused (invalid_request naming it), never answered as if it had not.
 */
export const UNHONOURED: readonly [string, (value: unknown) => boolean][] = [
  ['functions', (v) => Array.isArray(v) && v.length > 0],
  ['function_call', (v) => v !== 'none' && v !== 'auto' && v !== undefined],
  ['audio', (v) => v !== undefined],
  ['modalities', (v) => Array.isArray(v) && v.some((m) => m !== 'text')],
  ['web_search_options', (v) => v !== undefined],
  // Completions' own: the prompt in the answer, text after the insertion, the best of several.
  ['echo', (v) => v === true],
  ['suffix', (v) => typeof v === 'string' && v !== ''],
  ['best_of', (v) => typeof v === 'number' && v > 1],
];

/** Completions' own: `logprobs` is the count there; chat's `top_logprobs` has no meaning. */
export const COMPLETION_UNHONOURED: readonly [string, (value: unknown) => boolean][] = [
  ...UNHONOURED,
  ['top_logprobs', (v) => typeof v === 'number' && v > 0],
];

/** The request body of a job, validated for its kind (unknown fields are ignored, as OpenAI does). */
export function parseRequest<K extends 'chat' | 'completion' | 'embedding'>(
  kind: K,
  request: JsonObject,
): { chat: ChatRequest; completion: CompletionRequest; embedding: EmbeddingRequest }[K] {
  const checker = checkers[kind];
  if (kind !== 'embedding') {
    for (const [field, set] of kind === 'completion' ? COMPLETION_UNHONOURED : UNHONOURED) {
      if (set(request[field])) {
        throw new NodeError('invalid_request', { detail: `${field} is not supported by this node.` });
      }
    }
  }
  if (!checker.Check(request)) {
    const first = checker.Errors(request).First();
    throw new NodeError('invalid_request', {
      detail: first ? `${first.path || '/'}: ${first.message}` : undefined,
    });
  }
  return request as never;
}

/** A message's text: string content, or its text parts joined. */
export function messageText(message: ChatMessage): string {
  if (typeof message.content === 'string') return message.content;
  return (message.content ?? []).map((part) => part.text).join('');
}

/** The response id for a job kind, `chatcmpl-…` or `cmpl-…`. */
export function responseId(kind: JobKind): string {
  return `${kind === 'chat' ? 'chatcmpl' : 'cmpl'}-${randomBytes(12).toString('hex')}`;
}

export type FinishReason = 'stop' | 'length' | 'tool_calls';

type Meta = { id: string; model: string; created: number };

/** One `chat.completion.chunk`: the role first, then content deltas, then the finish reason. */
export function chatChunk(
  meta: Meta,
  delta: JsonObject,
  finishReason: FinishReason | null = null,
  index = 0,
  logprobs: JsonObject | null = null,
): JsonObject {
  return {
    id: meta.id,
    object: 'chat.completion.chunk',
    created: meta.created,
    model: meta.model,
    choices: [{ index, delta, logprobs, finish_reason: finishReason }],
  };
}

/** One streamed `text_completion` piece. */
export function completionChunk(
  meta: Meta,
  text: string,
  finishReason: FinishReason | null = null,
  index = 0,
  logprobs: JsonObject | null = null,
): JsonObject {
  return {
    id: meta.id,
    object: 'text_completion',
    created: meta.created,
    model: meta.model,
    choices: [{ index, text, logprobs, finish_reason: finishReason }],
  };
}

/**
 * What one choice answered (`logprobs`: its OpenAI logprobs object, when asked for): text, or —
 * for a chat choice that called tools — the calls (its content null).
 */
export type ChoiceText = {
  text: string;
  finishReason: FinishReason;
  logprobs?: JsonObject;
  toolCalls?: ToolCallOut[];
};

export function chatResponse(meta: Meta, choices: ChoiceText[], usage: Usage) {
  return {
    id: meta.id,
    object: 'chat.completion',
    created: meta.created,
    model: meta.model,
    choices: choices.map((c, index) => ({
      index,
      message: c.toolCalls
        ? { role: 'assistant', content: null, tool_calls: c.toolCalls }
        : { role: 'assistant', content: c.text },
      logprobs: c.logprobs ?? null,
      finish_reason: c.finishReason,
    })),
    usage,
  };
}

export type ToolCallOut = { id: string; type: 'function'; function: { name: string; arguments: string } };

export function completionResponse(meta: Meta, choices: ChoiceText[], usage: Usage) {
  return {
    id: meta.id,
    object: 'text_completion',
    created: meta.created,
    model: meta.model,
    choices: choices.map((c, index) => ({
      index,
      text: c.text,
      logprobs: c.logprobs ?? null,
      finish_reason: c.finishReason,
    })),
    usage,
  };
}

export function embeddingResponse(model: string, vectors: number[][], promptTokens: number) {
  return {
    object: 'list',
    data: vectors.map((embedding, index) => ({ object: 'embedding', index, embedding })),
    model,
    usage: { prompt_tokens: promptTokens, completion_tokens: 0, total_tokens: promptTokens },
  };
}

/** OpenAI's usage; with `cachedTokens`, `prompt_tokens_details.cached_tokens` (v0.5). */
export function usageOf(promptTokens: number, completionTokens: number, cachedTokens?: number): Usage {
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    ...(cachedTokens === undefined ? {} : { prompt_tokens_details: { cached_tokens: cachedTokens } }),
  };
}
