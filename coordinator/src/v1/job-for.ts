/**
 * The inference job of a /v1 request: the model's context decides max_tokens; the node gets the
 * body for that model, without the router's own fields.
 */
import { type JobKind, prefixKeys } from '@gpumesh/protocol';
import type { FastifyRequest } from 'fastify';
import type { CoordinatorConfig } from '../config.js';
import { ApiError } from '../errors.js';
import { MAX_CLIENT_USD, usdToNano } from '../ledger/money.js';
import { findModel } from '../router/find-model.js';
import type { ProviderPreferences } from '../router/pick-index.js';
import { isQuantizationName, QUANTIZATIONS } from '../router/quantization.js';
import type { Router } from '../router/router.js';
import type { InferenceJob } from '../router/types.js';
import { checkChatRequest } from './check-chat-request.js';
import { checkResponseFormat } from './check-response-format.js';
import { estimatePromptTokens } from './estimate-prompt-tokens.js';
import { requestOrigin } from './request-origin.js';
import type { ProviderPreferencesBody } from './schemas.js';

/** Fields of our own that never reach a node. */
export const ROUTER_FIELDS: readonly string[] = [
  'provider',
  'stream',
  'stream_options',
  'user',
  'max_completion_tokens',
  'encoding_format',
  'models',
  // OpenRouter's usage accounting ({include: true}): the usage chunk, as stream_options asks.
  'usage',
  // OpenRouter's prompt transforms: middle-out is applied here (middle-out.ts).
  'transforms',
];

/**
 * OpenRouter's model variants: `:floor` routes by price, `:nitro` by throughput. A served model
 * whose id ends so is itself (ids may hold colons: llama3:8b).
 */
const VARIANTS = { ':floor': 'price', ':nitro': 'throughput' } as const;

/** The model a request's `model` names, and the sort its variant asks for. */
export function modelVariant(
  router: Router,
  model: string,
): { model: string; sort?: 'price' | 'throughput' } {
  for (const [suffix, sort] of Object.entries(VARIANTS)) {
    if (!model.endsWith(suffix) || router.index.offers(model)?.size) continue;
    return { model: model.slice(0, -suffix.length), sort };
  }
  return { model };
}

export type JobFor = (
  kind: JobKind,
  request: FastifyRequest,
  body: Record<string, unknown> & { provider?: ProviderPreferencesBody },
  model: string,
  startedAt: number,
  promptTokensBound?: number,
) => InferenceJob;

/** Builds the jobs of requests routed by `router` under `config`. */
export function jobBuilder(router: Router, config: CoordinatorConfig): JobFor {
  return (
    kind: JobKind,
    request: FastifyRequest,
    body: Record<string, unknown> & { provider?: ProviderPreferencesBody },
    asked: string,
    startedAt: number,
    promptTokensBound?: number,
  ): InferenceJob => {
    const key = request.apiKey!;
    const variant = modelVariant(router, asked);
    const model = variant.model;
    const { contextLength } = findModel(router.index, model, kind);
    const maxTokens =
      kind === 'embedding' ? 0 : effectiveMaxTokens(body, config.router.maxTokensCap, contextLength);
    const nodeRequest: Record<string, unknown> = { ...body, model };
    for (const f of ROUTER_FIELDS) delete nodeRequest[f];
    if (kind !== 'embedding') nodeRequest.max_tokens = maxTokens;
    // One prompt in an array goes as that prompt (a string, as nodes before prompt arrays take it);
    // several go whole: the node answers each, one job (one hold, one settlement) for the request.
    const prompts = kind === 'completion' ? promptCount(body.prompt) : 1;
    if (
      kind === 'completion' &&
      Array.isArray(body.prompt) &&
      prompts === 1 &&
      typeof body.prompt[0] !== 'number'
    )
      nodeRequest.prompt = body.prompt[0];
    if (body.transforms !== undefined && kind !== 'embedding') checkTransforms(kind, body);
    if (body.min_p === 1)
      throw new ApiError('invalid_request', 'min_p must be below 1 (0 keeps every token).', {
        param: 'min_p',
      });
    if (kind === 'chat' || kind === 'vision') {
      checkTopLogprobs(body);
      checkChatRequest(body);
    }
    if (kind === 'completion') {
      checkResponseFormat(body);
      checkCompletionLogprobs(body);
    }
    return {
      requestId: request.id,
      userId: key.userId,
      keyId: key.keyId,
      keyLimitNano: key.limitNano,
      kind,
      model,
      nodeRequest,
      stream: kind !== 'embedding' && body.stream === true,
      promptTokensBound: promptTokensBound ?? estimatePromptTokens(kind, body),
      maxTokens,
      choices: (typeof body.n === 'number' ? body.n : 1) * prompts,
      startedAt,
      includeUsage:
        (body.stream_options as { include_usage?: unknown } | null | undefined)?.include_usage === true ||
        (body.usage as { include?: unknown } | null | undefined)?.include === true,
      provider: withSort(toPreferences(body.provider), variant.sort),
      origin: requestOrigin(request, body),
      // A chat prompt's prefixes, as the node is sent them (cached tokens' bound and affinity).
      ...(kind === 'chat' && Array.isArray(nodeRequest.messages)
        ? keysOf(model, nodeRequest.tools, nodeRequest.messages)
        : {}),
    };
  };
}

/**
 * The prompt's prefix keys, or none when the body holds a number JSON cannot carry (`-1e400` parses
 * to -Infinity; the node receives it as null, so no key computed here could match the node's).
 */
function keysOf(model: string, tools: unknown, messages: unknown[]): { prefixKeys?: string[] } {
  try {
    return { prefixKeys: prefixKeys(model, tools, messages) };
  } catch {
    return {};
  }
}

/** The prompts of a completion's `prompt`: strings or token-id lists count one each. */
export function promptCount(prompt: unknown): number {
  if (!Array.isArray(prompt) || typeof prompt[0] === 'number') return 1;
  return prompt.length;
}

/**
 * OpenRouter's `transforms`: a list of transform names, of which there is one, `middle-out`
 * (v1/middle-out.ts), applied to chat messages and to a completion's one text prompt; anything
 * else is 400 naming it, never ignored.
 */
function checkTransforms(kind: JobKind, body: Record<string, unknown>): void {
  const { transforms } = body;
  if (!Array.isArray(transforms) || transforms.some((t) => t !== 'middle-out'))
    throw new ApiError('invalid_request', 'transforms takes [] or ["middle-out"].', { param: 'transforms' });
  if (transforms.length > 0 && kind === 'completion' && typeof body.prompt !== 'string')
    throw new ApiError(
      'invalid_request',
      'middle-out cuts a text prompt: one string, not a list or token ids.',
      {
        param: 'transforms',
      },
    );
}

/** OpenAI's rule: chat's `top_logprobs` needs `logprobs: true`. */
function checkTopLogprobs(body: Record<string, unknown>): void {
  if (typeof body.top_logprobs === 'number' && body.top_logprobs > 0 && body.logprobs !== true) {
    throw new ApiError('invalid_request', 'top_logprobs needs logprobs: true.', { param: 'top_logprobs' });
  }
}

/** A completion's alternatives are `logprobs: N`; chat's `top_logprobs` means nothing there. */
function checkCompletionLogprobs(body: Record<string, unknown>): void {
  if (typeof body.top_logprobs === 'number' && body.top_logprobs > 0) {
    throw new ApiError(
      'invalid_request',
      "top_logprobs is chat's: a completion asks for alternatives with logprobs (0 to 5).",
      { param: 'top_logprobs' },
    );
  }
}

/**
 * The answer's token limit: `max_completion_tokens` or its older name `max_tokens` (a `null` is
 * not given: dropped before validation), else as much as the context and the cap allow. Both at
 * once is OpenAI's 400 (`invalid_parameter_combination` there, `param` max_tokens), never one
 * silently winning over the other.
 */
function effectiveMaxTokens(body: Record<string, unknown>, cap: number, contextLength: number): number {
  if (body.max_completion_tokens !== undefined && body.max_tokens !== undefined) {
    throw new ApiError(
      'invalid_request',
      "Setting 'max_tokens' and 'max_completion_tokens' at the same time is not supported.",
      { param: 'max_tokens' },
    );
  }
  const field = body.max_completion_tokens !== undefined ? 'max_completion_tokens' : 'max_tokens';
  const asked = body[field] as number | undefined;
  if (asked !== undefined) {
    if (asked > cap) {
      throw new ApiError('invalid_request', `${field} may be at most ${cap}.`, { param: field });
    }
    if (asked >= contextLength) {
      throw new ApiError(
        'context_length_exceeded',
        `${field} (${asked}) leaves no room for the prompt in the model's ${contextLength}-token context.`,
        { param: field },
      );
    }
    return asked;
  }
  return Math.max(1, Math.min(cap, contextLength));
}

/**
 * A max_price field (USD per million tokens, number or decimal string; null or absent = no limit)
 * → nanousd per million, through the one checked conversion; out of range is 400 naming the field.
 */
function maxPriceNano(value: number | string | null | undefined, field: 'prompt' | 'completion') {
  if (value === undefined || value === null) return undefined;
  const nano = usdToNano(value);
  if (nano === null) {
    throw new ApiError(
      'invalid_request',
      `provider.max_price.${field} must be a USD amount from 0 to ${MAX_CLIENT_USD}.`,
      { param: `provider.max_price.${field}` },
    );
  }
  return nano;
}

function toPreferences(p: ProviderPreferencesBody | undefined): ProviderPreferences | undefined {
  if (!p) return undefined;
  const maxIn = maxPriceNano(p.max_price?.prompt, 'prompt');
  const maxOut = maxPriceNano(p.max_price?.completion, 'completion');
  return {
    ...(p.order ? { order: p.order } : {}),
    ...(p.allow_fallbacks !== undefined ? { allowFallbacks: p.allow_fallbacks } : {}),
    ...(maxIn !== undefined ? { maxPriceInNano: maxIn } : {}),
    ...(maxOut !== undefined ? { maxPriceOutNano: maxOut } : {}),
    ...(p.only ? { only: p.only } : {}),
    ...(p.ignore ? { ignore: p.ignore } : {}),
    ...(p.sort ? { sort: p.sort as 'price' | 'latency' | 'throughput' } : {}),
    ...(p.require_parameters !== undefined ? { requireParameters: p.require_parameters } : {}),
    ...(p.data_collection ? { dataCollection: p.data_collection as 'allow' | 'deny' } : {}),
    ...(p.zdr !== undefined ? { zdr: p.zdr } : {}),
    ...(p.quantizations?.length ? { quantizations: checkQuantizations(p.quantizations) } : {}),
  };
}

/** `provider.quantizations`, each an OpenRouter class or a GGUF type name; else 400 naming it. */
function checkQuantizations(names: readonly string[]): readonly string[] {
  names.forEach((name, i) => {
    if (!isQuantizationName(name))
      throw new ApiError(
        'invalid_request',
        `provider.quantizations: "${name}" is neither one of ${QUANTIZATIONS.join(', ')} nor a GGUF type (Q4_K_M, …).`,
        { param: `provider.quantizations.${i}` },
      );
  });
  return names;
}

/** The preferences with the variant's sort, unless the request chose one. */
function withSort(
  preferences: ProviderPreferences | undefined,
  sort: 'price' | 'throughput' | undefined,
): ProviderPreferences | undefined {
  if (!sort || preferences?.sort) return preferences;
  return { ...preferences, sort };
}
