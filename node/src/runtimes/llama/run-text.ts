import { prefixKeys } from '@gpumesh/protocol';
import type { LlamaModel, Token } from 'node-llama-cpp';
import { NodeError } from '../../errors.js';
import {
  type ChatRequest,
  type ChoiceText,
  type CompletionRequest,
  chatChunk,
  chatResponse,
  completionChunk,
  completionResponse,
  parseRequest,
  responseId,
  usageOf,
} from '../openai-shapes.js';
import type { JobResponse, RuntimeJob } from '../runtime.js';
import { AutoCallGate, autoToolNames, parseToolCalls, strictAutoTools } from './auto-tool-calls.js';
import { toChatHistory } from './chat-history.js';
import { completionPrompts } from './completion-prompts.js';
import { generateText } from './generate-text.js';
import type { JsonGrammars } from './json-grammars.js';
import { type LoadedModel, vocabularySize, withSequence } from './loaded-model.js';
import type { HeldPrefix } from './sequence-pool.js';
import { toTokenBias } from './to-token-bias.js';
import { chatLogprobs, completionLogprobs, type TokenLogprob } from './token-logprobs.js';
import { forcedTools, ToolCallStream } from './tool-calls.js';

export const DEFAULT_MAX_TOKENS = 512;
/** OpenAI's default sampling temperature. */
export const DEFAULT_TEMPERATURE = 1;
/** Tokens of a continued answer's text given to the detokenizer as context (leading-space rules). */
const CONTINUED_CONTEXT_TOKENS = 16;

/**
 * A `chat` or `completion` job: the prompt (chat: the model's template over the messages; a
 * completion: BOS and the raw prompt, or the token ids given) sampled under the request's settings,
 * `n` choices one after another — per prompt, for a completion of several (choice index
 * prompt × n + i) — streamed as chunks when asked, with each token's log-probabilities when asked
 * (token-logprobs.ts). A job with `continueFrom` continues that answer instead of beginning one
 * (NODE_PROTOCOL.md §9 "Continuing an answer"): the chat's model turn begun with its text and left
 * open, or the text appended to the prompt; only the new text is returned. Each prompt runs on the
 * sequence that holds most of it (the prefix cache, sequence-pool.ts): `cached_tokens` says how many
 * of its tokens were not evaluated again, and a chat's sequence is then known by its prefix keys.
 */
export async function runText(
  entry: LoadedModel,
  job: RuntimeJob,
  grammars: JsonGrammars,
): Promise<JobResponse> {
  const chat = job.kind === 'chat';
  const request = chat ? parseRequest('chat', job.request) : parseRequest('completion', job.request);
  const { model } = entry;
  const stop = stopStrings(request.stop);
  // A forced tool call (tool_choice "required" or a named function) is sampled under a grammar of
  // the calls' shape: the arguments validate against the function's parameters.
  const forced = chat ? forcedTools(request as ChatRequest) : undefined;
  // Continued from token ids (v0.4): the prompt as for a fresh answer, then the ids replayed as
  // they are; from text (v0.3): the text rendered into the prompt.
  const resume = job.continueFrom?.tokenIds
    ? { tokenIds: replayIds(model, job.continueFrom.tokenIds), text: job.continueFrom.text }
    : undefined;
  const answerSoFar = resume ? undefined : job.continueFrom?.text;
  if (job.continueFrom) refuseUncontinuable(request, chat);
  let prompts: Token[][];
  if (chat) {
    const state = entry.chatWrapper!.generateContextState({
      chatHistory: toChatHistory(
        (request as ChatRequest).messages,
        (request as ChatRequest).tools,
        answerSoFar,
      ),
    });
    prompts = [state.contextText.tokenize(model.tokenizer)];
    for (const trigger of state.stopGenerationTriggers) {
      const values = trigger.values;
      if (values.every((value) => typeof value === 'string')) stop.push(values.join(''));
    }
  } else {
    prompts = completionPrompts(model, (request as CompletionRequest).prompt, answerSoFar);
  }
  // Every token evaluated: a continuation's replayed ids too (NODE_PROTOCOL.md §9).
  const promptCount = prompts.reduce((sum, p) => sum + p.length, 0) + (resume?.tokenIds.length ?? 0);
  const top = logprobsAsked(request, chat);
  job.onPromptTokens?.(promptCount);
  const meta = { id: responseId(job.kind), model: job.model, created: Math.floor(Date.now() / 1000) };
  const emit = job.stream && !forced ? job.onChunk : undefined;
  // Tools listed and no call forced: the model may answer with calls (auto-tool-calls.ts).
  const autoTools = chat && !forced ? autoToolNames(request as ChatRequest) : undefined;
  const parallel = (request as ChatRequest).parallel_tool_calls !== false;
  // A strict tool is refused when its parameters can't be enforced, called now or not.
  if (chat) grammars.checkStrictTools((request as ChatRequest).tools);
  // Calls the model may make on its own, a tool strict: the answer is prose or calls whose strict
  // arguments hold, under a grammar. A JSON response_format keeps its own (the answer is that JSON).
  const jsonFormat = request.response_format && request.response_format.type !== 'text';
  const strictAuto = autoTools && !jsonFormat ? strictAutoTools(request as ChatRequest) : undefined;
  const grammar = forced
    ? await grammars.forToolCalls(forced.tools)
    : strictAuto
      ? await grammars.forAutoCalls(strictAuto, parallel)
      : await grammars.forResponseFormat(request.response_format);
  // A choice that called tools has no content, so no content log-probabilities: OpenAI's
  // `{content: null, refusal: null}` (a forced call's are not even computed).
  const noContentLogprobs = top !== undefined ? { content: null, refusal: null } : undefined;
  // n choices, one after another on one sequence; choice i samples with seed + i (when seeded).
  const n = request.n ?? 1;
  const choices: ChoiceText[] = [];
  let completionTokens = 0;
  let cachedTokens = 0;
  const holds = chat ? heldPrefix(job) : undefined;
  for (let index = 0; index < n * prompts.length; index++) {
    const promptTokens = prompts[Math.floor(index / n)]!;
    const choiceSeed = index % n;
    let streamedTokens = 0;
    let streamedIds = 0;
    const logprobsOf = (entries: TokenLogprob[] | undefined) =>
      entries === undefined || entries.length === 0
        ? null
        : chat
          ? chatLogprobs(entries)
          : completionLogprobs(entries);
    if (chat) emit?.(chatChunk(meta, { role: 'assistant', content: '' }, null, index), 0);
    const sendText = (text: string, tokens: number, entries?: TokenLogprob[], ids?: Token[]) => {
      streamedTokens += tokens;
      streamedIds += ids?.length ?? 0;
      const logprobs = logprobsOf(entries);
      emit!(
        chat
          ? chatChunk(meta, { content: text }, null, index, logprobs)
          : completionChunk(meta, text, null, index, logprobs),
        tokens,
        ids,
      );
    };
    // Each choice's own forced call (its chunks carry the choice's index).
    const call = forced ? new ToolCallStream(meta, job.stream ? job.onChunk : undefined, index) : undefined;
    const gate = emit && autoTools ? new AutoCallGate(sendText) : undefined;
    const result = await withSequence(
      entry,
      (sequence) =>
        generateText({
          sequence,
          promptTokens,
          maxTokens: request.max_completion_tokens ?? request.max_tokens ?? DEFAULT_MAX_TOKENS,
          temperature: request.temperature ?? DEFAULT_TEMPERATURE,
          topP: request.top_p,
          ...(request.top_k ? { topK: request.top_k } : {}),
          ...(request.min_p ? { minP: request.min_p } : {}),
          seed: request.seed === undefined ? undefined : request.seed + choiceSeed,
          ...(top !== undefined && !forced ? { logprobs: top } : {}),
          tokenBias: toTokenBias(model, request.logit_bias, grammar !== undefined),
          ...(request.presence_penalty ? { presencePenalty: request.presence_penalty } : {}),
          ...(request.frequency_penalty ? { frequencyPenalty: request.frequency_penalty } : {}),
          ...(grammar ? { grammar } : {}),
          // The continued text's last tokens precede the new ones: the first keeps its leading space.
          ...(answerSoFar !== undefined ? { lastTokens: promptTokens.slice(-CONTINUED_CONTEXT_TOKENS) } : {}),
          ...(resume ? { resume } : {}),
          // A forced call ends where its grammar does: a stop string inside it would cut the JSON.
          stop: forced ? [] : stop,
          signal: job.signal,
          onText: call
            ? (text, tokens) => call.push(text, tokens)
            : gate
              ? (text, tokens, entries) => gate.push(text, tokens, entries)
              : emit && sendText,
        }),
      { prompt: promptTokens, ...(holds ? { holds } : {}) },
    );
    completionTokens += result.completionTokens;
    // A prompt's cached tokens are its first choice's: the others reuse what that one evaluated.
    if (index % n === 0) cachedTokens += result.cachedTokens;
    // The token ids a verifier checks are choice 0's (NODE_PROTOCOL.md §9).
    if (index === 0) {
      job.onTokenIds?.({
        prompt: [...promptTokens, ...(resume?.tokenIds ?? [])],
        completion: [...result.tokenIds],
      });
    }
    if (call) {
      choices.push({
        ...call.finish(result, forced?.name),
        ...(noContentLogprobs ? { logprobs: noContentLogprobs } : {}),
      });
      continue;
    }
    const calls = autoTools ? parseToolCalls(result.text, autoTools, parallel) : undefined;
    if (calls) {
      // The answer was calls: streamed as OpenAI streams them, their tokens in the choice's last chunk.
      emit?.(chatChunk(meta, { tool_calls: calls.map((c, i) => ({ index: i, ...c })) }, null, index), 0);
      emit?.(chatChunk(meta, {}, 'tool_calls', index), result.completionTokens - streamedTokens);
      choices.push({
        text: '',
        finishReason: 'tool_calls',
        toolCalls: calls,
        ...(noContentLogprobs ? { logprobs: noContentLogprobs } : {}),
      });
      continue;
    }
    gate?.flush();
    // Tokens whose text was never sent (a matched stop string) count in the choice's last chunk.
    const unsent = result.completionTokens - streamedTokens;
    emit?.(
      chat
        ? chatChunk(meta, {}, result.finishReason, index)
        : completionChunk(meta, '', result.finishReason, index),
      unsent,
      gate ? undefined : result.tokenIds.slice(streamedIds),
    );
    choices.push({
      text: result.text,
      finishReason: result.finishReason,
      ...(result.logprobs
        ? { logprobs: chat ? chatLogprobs(result.logprobs) : completionLogprobs(result.logprobs) }
        : {}),
    });
  }
  const usage = usageOf(promptCount, completionTokens, cachedTokens);
  return chat ? chatResponse(meta, choices, usage) : completionResponse(meta, choices, usage);
}

/** A chat job's prefix keys under the model id its request names (NODE_PROTOCOL.md §9 "Prefix cache"). */
function heldPrefix(job: RuntimeJob): HeldPrefix | undefined {
  const { model, tools, messages } = job.request;
  if (!Array.isArray(messages)) return undefined;
  const modelId = typeof model === 'string' ? model : job.model;
  return { model: modelId, keys: prefixKeys(modelId, tools, messages) };
}

/**
 * A continued answer is plain text of one choice: under a grammar (tools, a JSON response_format)
 * the continuation would start the grammar again mid-answer, and `n` answers have no one text so far.
 */
function refuseUncontinuable(request: ChatRequest | CompletionRequest, chat: boolean): void {
  const tools = chat && ((request as ChatRequest).tools?.length ?? 0) > 0;
  const format = request.response_format && request.response_format.type !== 'text';
  const onePrompt = chat || typeof (request as CompletionRequest).prompt === 'string';
  if (tools || format || (request.n ?? 1) > 1 || !onePrompt) {
    throw new NodeError('invalid_request', {
      detail:
        'continueFrom is only for one plain-text choice (no tools, no JSON response_format, n 1, a string prompt).',
    });
  }
}

/** A continuation's token ids, each in the model's vocabulary (an id outside it must never reach llama.cpp). */
function replayIds(model: LlamaModel, ids: readonly number[]): Token[] {
  const size = vocabularySize(model);
  const bad = ids.findIndex((id) => !Number.isInteger(id) || id < 0 || id >= size);
  if (bad >= 0) {
    throw new NodeError('invalid_request', {
      detail: `continueFrom.tokenIds[${bad}]: token id ${ids[bad]} is not in the model's vocabulary.`,
    });
  }
  return ids as Token[];
}

/**
 * How many alternatives each token's log-probabilities carry, or undefined when none are asked:
 * chat's `logprobs: true` with `top_logprobs` (which OpenAI refuses without it), completions'
 * `logprobs: N`.
 */
function logprobsAsked(request: ChatRequest | CompletionRequest, chat: boolean): number | undefined {
  if (!chat) return (request as CompletionRequest).logprobs ?? undefined;
  const { logprobs, top_logprobs: top } = request as ChatRequest;
  if (top !== undefined && top > 0 && logprobs !== true) {
    throw new NodeError('invalid_request', { detail: 'top_logprobs needs logprobs: true.' });
  }
  return logprobs === true ? (top ?? 0) : undefined;
}

function stopStrings(stop: string | string[] | null | undefined): string[] {
  if (stop == null) return [];
  return (typeof stop === 'string' ? [stop] : stop).filter((s) => s.length > 0);
}
