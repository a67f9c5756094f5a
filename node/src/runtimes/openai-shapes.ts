import { randomBytes } from 'node:crypto';
import { type Static, Type } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { NodeError } from '../errors.js';
import type { JobKind, JsonObject, Usage } from './runtime.js';

const TextPart = Type.Object({ type: Type.Literal('text'), text: Type.String() });
const Message = Type.Object({
  role: Type.Union(['system', 'developer', 'user', 'assistant'].map((role) => Type.Literal(role))),
  content: Type.Union([Type.String(), Type.Array(TextPart), Type.Null()]),
});
const Sampling = {
  max_tokens: Type.Optional(Type.Integer({ minimum: 1 })),
  max_completion_tokens: Type.Optional(Type.Integer({ minimum: 1 })),
  temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
  top_p: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 1 })),
  seed: Type.Optional(Type.Integer()),
  stop: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String(), { maxItems: 4 }), Type.Null()])),
  /** Token id → bias in [-100, 100]; -100 bans the token, 100 forces it. */
  logit_bias: Type.Optional(
    Type.Record(Type.String({ pattern: '^[0-9]+$' }), Type.Number({ minimum: -100, maximum: 100 })),
  ),
  n: Type.Optional(Type.Literal(1)),
};
export const ChatRequest = Type.Object({ messages: Type.Array(Message, { minItems: 1 }), ...Sampling });
export const CompletionRequest = Type.Object({ prompt: Type.String(), ...Sampling });
export const EmbeddingRequest = Type.Object({
  input: Type.Union([Type.String(), Type.Array(Type.String(), { minItems: 1, maxItems: 2048 })]),
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

/** The request body of a job, validated for its kind (unknown fields are ignored, as OpenAI does). */
export function parseRequest<K extends JobKind>(
  kind: K,
  request: JsonObject,
): { chat: ChatRequest; completion: CompletionRequest; embedding: EmbeddingRequest }[K] {
  const checker = checkers[kind];
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

export type FinishReason = 'stop' | 'length';

type Meta = { id: string; model: string; created: number };

/** One `chat.completion.chunk`: the role first, then content deltas, then the finish reason. */
export function chatChunk(
  meta: Meta,
  delta: JsonObject,
  finishReason: FinishReason | null = null,
): JsonObject {
  return {
    id: meta.id,
    object: 'chat.completion.chunk',
    created: meta.created,
    model: meta.model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
  };
}

/** One streamed `text_completion` piece. */
export function completionChunk(
  meta: Meta,
  text: string,
  finishReason: FinishReason | null = null,
): JsonObject {
  return {
    id: meta.id,
    object: 'text_completion',
    created: meta.created,
    model: meta.model,
    choices: [{ index: 0, text, logprobs: null, finish_reason: finishReason }],
  };
}

export function chatResponse(meta: Meta, content: string, finishReason: FinishReason, usage: Usage) {
  return {
    id: meta.id,
    object: 'chat.completion',
    created: meta.created,
    model: meta.model,
    choices: [
      { index: 0, message: { role: 'assistant', content }, logprobs: null, finish_reason: finishReason },
    ],
    usage,
  };
}

export function completionResponse(meta: Meta, text: string, finishReason: FinishReason, usage: Usage) {
  return {
    id: meta.id,
    object: 'text_completion',
    created: meta.created,
    model: meta.model,
    choices: [{ index: 0, text, logprobs: null, finish_reason: finishReason }],
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

export function usageOf(promptTokens: number, completionTokens: number): Usage {
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
  };
}
