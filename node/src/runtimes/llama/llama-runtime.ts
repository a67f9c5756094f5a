import { availableParallelism } from 'node:os';
import { VerifyRequest } from '@gpumesh/protocol';
import { Value } from '@sinclair/typebox/value';
import {
  type ChatHistoryItem,
  type ChatWrapper,
  getLlama,
  getModuleVersion,
  type Llama,
  type LlamaContext,
  type LlamaContextSequence,
  type LlamaEmbeddingContext,
  type LlamaGrammar,
  type LlamaModel,
  resolveChatWrapper,
  type Token,
  TokenBias,
} from 'node-llama-cpp';
import { NodeError, toNodeError } from '../../errors.js';
import {
  type ChatMessage,
  type ChatRequest,
  type CompletionRequest,
  chatChunk,
  chatResponse,
  completionChunk,
  completionResponse,
  embeddingResponse,
  type FinishReason,
  messageText,
  parseRequest,
  responseId,
  usageOf,
} from '../openai-shapes.js';
import type {
  JobKind,
  JobResponse,
  LoadProgress,
  ModelFamily,
  Runtime,
  RuntimeJob,
  ServedModel,
} from '../runtime.js';
import { generateText } from './generate-text.js';
import { llamaSettings } from './llama-settings.js';
import { sequencesForVram } from './sequences-for-vram.js';
import { forcedTools, ToolCallStream } from './tool-calls.js';
import { verificationResponse } from './verification-response.js';
import { verifyTokens } from './verify-tokens.js';

/** One GGUF file to serve. */
export type LlamaModelSpec = {
  /** The model id jobs name. */
  id: string;
  path: string;
  /** Jobs run at once (sequences of one context). */
  maxConcurrency: number;
  /** Tokens per sequence; capped by what the model was trained on. */
  contextLength?: number;
  /** Overrides the family read from the file (decoder models: chat; encoders: embedding). */
  family?: ModelFamily;
  /** Also offer this decoder model's pooled embeddings, under this id. */
  embeddingId?: string;
  /** SHA-256 of the file, announced with its offers (the catalog maps it to a canonical id). */
  sha256?: string;
  /**
   * `maxConcurrency` was not set: on a GPU, size it from the VRAM left after the weights load
   * (sequences-for-vram.ts); on the CPU keep `maxConcurrency`.
   */
  autoConcurrency?: boolean;
};

export type LlamaRuntimeOptions = {
  models: LlamaModelSpec[];
  /** CPU threads per model context (see {@link defaultThreads}). */
  threads?: number;
  /** `false` forces the CPU build; `'auto'` lets node-llama-cpp pick CUDA, Vulkan or Metal. */
  gpu?: false | 'auto';
  /** Layers offloaded to the GPU (default `auto`: as many as free VRAM fits). */
  gpuLayers?: 'auto' | 'max' | number;
  /** GPU indices to use (default all). */
  gpus?: readonly number[];
  /** Shares an already loaded llama.cpp binding (tests, benchmarks). */
  llama?: Llama;
};

/** Machines with at most this many cores run each model context on one thread. */
const SMALL_MACHINE_CORES = 4;

/**
 * Threads per model context for a core count. On small machines one thread is fastest by far
 * (measured on 2 cores: 1 thread ~1,500 tokens/s; 2 threads ~40; 4 threads ~3); bigger machines get
 * half their cores, leaving the rest to the other models and the daemon.
 */
export function defaultThreads(cores: number = availableParallelism()): number {
  return cores <= SMALL_MACHINE_CORES ? 1 : Math.floor(cores / 2);
}
export const DEFAULT_CONTEXT_TOKENS = 4096;

/**
 * When node-llama-cpp sends the decode a job queued: at once while one job runs on the context
 * (there is nothing to batch it with), else on the next macrotask, so that concurrent jobs' tokens
 * share one batched decode. node-llama-cpp's own schedule sends at once only when all of the
 * context's sequences have queued, in use or not, so with the default 2 a lone job's every token
 * waited a macrotask: ~25 µs a token on this 2-core machine at load ~3.5 (tiny bench model 256 vs 232 µs a token
 * with one sequence; medium 1,774 vs 1,748), and behind any macrotask queued before it, such as
 * the chunk frame the token loop had just made due. Sent at once: 235 and 1,737 µs.
 */
export function decodeDispatchSchedule(inUse: () => number): (dispatch: () => void) => void {
  return (dispatch) => {
    if (inUse() <= 1) dispatch();
    else setImmediate(dispatch);
  };
}
export const DEFAULT_MAX_TOKENS = 512;
/** OpenAI's default sampling temperature. */
export const DEFAULT_TEMPERATURE = 1;

const ENCODER_ARCHITECTURES = new Set(['bert', 'nomic-bert', 'jina-bert-v2', 't5encoder']);
const KINDS_BY_FAMILY: Record<ModelFamily, JobKind[]> = {
  chat: ['chat', 'completion', 'verify'],
  text: ['completion', 'verify'],
  embedding: ['embedding'],
  // node-llama-cpp 3.22 takes no image or audio input: vision and voice go through the relay.
  vision: [],
  voice: [],
};

type Loaded = {
  offers: ServedModel[];
  contextLength: number;
  model: LlamaModel;
  context?: LlamaContext;
  idle: LlamaContextSequence[];
  waiters: ((sequence: LlamaContextSequence) => void)[];
  chatWrapper?: ChatWrapper;
  embedding?: Promise<LlamaEmbeddingContext>;
};

/** node-llama-cpp's integer rule (an optional exponent after the digits) and ours, without it. */
const INTEGER_RULE = /^(integer-number-rule ::= .*?) \(\[eE\] [^\n]*$/m;
const PLAIN_INTEGER_RULE = '$1';

/** Grammars kept at most (one per distinct response schema). */
const MAX_GRAMMARS = 64;

/**
 * The default runtime: GGUF models in this process through node-llama-cpp. Each model gets one
 * context with `maxConcurrency` sequences, so concurrent jobs share one batched decode. Chat uses the
 * model's own chat template; usage counts are the exact tokens evaluated and sampled.
 */
export function createLlamaRuntime(options: LlamaRuntimeOptions): Runtime {
  const settings = llamaSettings({
    gpu: options.gpu ?? 'auto',
    gpuLayers: options.gpuLayers ?? 'auto',
    ...(options.gpus ? { gpus: options.gpus } : {}),
  });
  /** Offer id → the loaded model serving it (a model may be offered twice: chat and embedding). */
  const loaded = new Map<string, { offer: ServedModel; entry: Loaded }>();
  const entries: Loaded[] = [];
  let llama: Llama | undefined;
  let closed = false;
  /** Grammars by schema text (building one parses the schema and compiles GBNF). */
  const grammars = new Map<string, Promise<LlamaGrammar>>();
  const threads = options.threads ?? defaultThreads();

  async function loadOne(spec: LlamaModelSpec, report: (fraction: number) => void): Promise<Loaded> {
    const model = await llama!.loadModel({
      modelPath: spec.path,
      onLoadProgress: report,
      ...settings.loadModel,
    });
    const trained = model.trainContextSize;
    const contextLength = Math.min(spec.contextLength ?? DEFAULT_CONTEXT_TOKENS, trained);
    const maxConcurrency =
      spec.autoConcurrency && llama!.gpu !== false && model.gpuLayers > 0
        ? sequencesForVram({
            freeVramBytes: (await llama!.getVramState()).free,
            sequenceVramBytes: model.fileInsights.estimateContextResourceRequirements({
              contextSize: contextLength,
              modelGpuLayers: model.gpuLayers,
              sequences: 1,
            }).gpuVram,
          })
        : spec.maxConcurrency;
    const architecture = model.fileInfo.metadata.general.architecture;
    const family = spec.family ?? (ENCODER_ARCHITECTURES.has(String(architecture)) ? 'embedding' : 'chat');
    const sha256 = spec.sha256 ? { sha256: spec.sha256 } : {};
    const offers: ServedModel[] = [{ id: spec.id, family, contextLength, maxConcurrency, ...sha256 }];
    if (spec.embeddingId && family !== 'embedding') {
      offers.push({
        id: spec.embeddingId,
        family: 'embedding',
        contextLength,
        maxConcurrency,
        ...sha256,
      });
    }
    const entry: Loaded = {
      offers,
      contextLength,
      model,
      idle: [],
      waiters: [],
    };
    if (family !== 'embedding') {
      const context = await model.createContext({
        sequences: maxConcurrency,
        contextSize: contextLength,
        threads,
        batching: {
          dispatchSchedule: decodeDispatchSchedule(() => maxConcurrency - entry.idle.length),
        },
      });
      entry.context = context;
      for (let i = 0; i < maxConcurrency; i++) entry.idle.push(context.getSequence());
      entry.chatWrapper = resolveChatWrapper(model);
    }
    return entry;
  }

  async function withSequence<T>(
    entry: Loaded,
    work: (sequence: LlamaContextSequence) => Promise<T>,
  ): Promise<T> {
    const sequence =
      entry.idle.pop() ?? (await new Promise<LlamaContextSequence>((resolve) => entry.waiters.push(resolve)));
    try {
      return await work(sequence);
    } finally {
      const next = entry.waiters.shift();
      if (next) next(sequence);
      else entry.idle.push(sequence);
    }
  }

  /**
   * The grammar a response_format asks for: any JSON object (json_object) or the given schema
   * (json_schema), through llama.cpp's grammar sampler, so the output parses as asked. Built once
   * per schema text.
   */
  async function grammarFor(format: ChatRequest['response_format']): Promise<LlamaGrammar | undefined> {
    if (!format || format.type === 'text') return undefined;
    const schema =
      format.type === 'json_object' ? { type: 'object' } : (format.json_schema.schema ?? { type: 'object' });
    return grammarForSchema(schema);
  }

  function grammarForSchema(schema: object): Promise<LlamaGrammar> {
    const key = JSON.stringify(schema);
    let grammar = grammars.get(key);
    if (!grammar) {
      grammar = llama!
        .createGrammarForJsonSchema(schema as Parameters<Llama['createGrammarForJsonSchema']>[0])
        .then((json) =>
          // JSON Schema's integer is a plain integer: node-llama-cpp's rule also lets an exponent
          // through ("-83e811" parses as -Infinity).
          llama!.createGrammar({
            grammar: json.grammar.replace(INTEGER_RULE, PLAIN_INTEGER_RULE),
            stopGenerationTriggers: [...json.stopGenerationTriggers],
            trimWhitespaceSuffix: json.trimWhitespaceSuffix,
          }),
        )
        .catch((error: unknown) => {
          grammars.delete(key);
          throw new NodeError('invalid_request', {
            detail: `response_format's schema is not supported: ${error instanceof Error ? error.message.slice(0, 200) : 'invalid'}`,
          });
        });
      if (grammars.size >= MAX_GRAMMARS) grammars.delete(grammars.keys().next().value!);
      grammars.set(key, grammar);
    }
    return grammar;
  }

  function modelFor(job: RuntimeJob): Loaded {
    const served = loaded.get(job.model);
    if (!served) throw new NodeError('model_not_found', { detail: `${job.model} (${job.kind})` });
    // A kind the model's family does not take is the request's fault (NODE_PROTOCOL.md §9 "Odd jobs").
    if (!KINDS_BY_FAMILY[served.offer.family].includes(job.kind)) {
      throw new NodeError('invalid_request', { detail: `${job.model} takes no ${job.kind} jobs` });
    }
    return served.entry;
  }

  /**
   * A `verify` job: the given prompt and completion teacher-forced on this model, one batched pass;
   * per completion token its log-probability and whether it was in the top k (a "1"/"0" string).
   * Usage: every token evaluated counts as prompt.
   */
  async function runVerify(entry: Loaded, job: RuntimeJob): Promise<JobResponse> {
    if (!Value.Check(VerifyRequest, job.request)) {
      throw new NodeError('invalid_request', { detail: 'verify: promptTokenIds, completionTokenIds, topK' });
    }
    const request = job.request as VerifyRequest;
    // Scores from other weights under the same id would convict an honest node: refuse instead.
    const sha256 = loaded.get(job.model)?.offer.sha256;
    if (request.sha256 && request.sha256 !== sha256) {
      throw new NodeError('model_not_found', {
        detail: `verify: ${job.model} is not the weights ${request.sha256}`,
      });
    }
    const vocabulary = vocabularySize(entry.model);
    if ([...request.promptTokenIds, ...request.completionTokenIds].some((t) => t >= vocabulary)) {
      throw new NodeError('invalid_request', {
        detail: `verify: a token id is outside the vocabulary (${vocabulary})`,
      });
    }
    const evaluated = request.promptTokenIds.length + request.completionTokenIds.length;
    if (evaluated > Math.min(entry.contextLength, entry.context?.contextSize ?? 0)) {
      throw new NodeError('context_length_exceeded', { detail: `${evaluated} tokens to verify` });
    }
    job.onPromptTokens?.(evaluated);
    const verified = await withSequence(entry, (sequence) =>
      verifyTokens(sequence, {
        promptTokens: request.promptTokenIds as Token[],
        completionTokens: request.completionTokenIds as Token[],
        topK: request.topK,
        ...(request.sampling ? { sampling: request.sampling } : {}),
      }),
    );
    return verificationResponse({ model: entry.model, modelId: job.model, request, verified });
  }

  /** Tokens in the model's vocabulary (a token id outside it must never reach llama.cpp). */
  function vocabularySize(model: LlamaModel): number {
    const metadata = model.fileInfo.metadata as unknown as {
      tokenizer?: { ggml?: { tokens?: readonly unknown[] } };
    };
    return metadata.tokenizer?.ggml?.tokens?.length ?? 0;
  }

  async function runText(entry: Loaded, job: RuntimeJob): Promise<JobResponse> {
    const chat = job.kind === 'chat';
    const request = chat ? parseRequest('chat', job.request) : parseRequest('completion', job.request);
    const { model } = entry;
    const stop = stopStrings(request.stop);
    // A forced tool call (tool_choice "required" or a named function) is sampled under a grammar of
    // the calls' shape: the arguments validate against the function's parameters.
    const forced = chat ? forcedTools(request as ChatRequest) : undefined;
    let promptTokens: Token[];
    if (chat) {
      const state = entry.chatWrapper!.generateContextState({
        chatHistory: toChatHistory((request as ChatRequest).messages, (request as ChatRequest).tools),
      });
      promptTokens = state.contextText.tokenize(model.tokenizer);
      for (const trigger of state.stopGenerationTriggers) {
        const values = trigger.values;
        if (values.every((value) => typeof value === 'string')) stop.push(values.join(''));
      }
    } else {
      const bos = model.tokens.bos;
      const text = model.tokenize((request as CompletionRequest).prompt);
      promptTokens = bos !== null && model.tokens.shouldPrependBosToken ? [bos, ...text] : text;
    }
    job.onPromptTokens?.(promptTokens.length);
    const meta = { id: responseId(job.kind), model: job.model, created: Math.floor(Date.now() / 1000) };
    const emit = job.stream && !forced ? job.onChunk : undefined;
    const call = forced ? new ToolCallStream(meta, job.stream ? job.onChunk : undefined) : undefined;
    const grammar = forced
      ? await grammarForSchema(forced.schema)
      : await grammarFor(request.response_format);
    // n choices, one after another on one sequence; choice i samples with seed + i (when seeded).
    const n = request.n ?? 1;
    if (n > 1 && forced) {
      throw new NodeError('invalid_request', { detail: 'n > 1 with a forced tool call is not supported.' });
    }
    const choices: { text: string; finishReason: FinishReason }[] = [];
    let completionTokens = 0;
    for (let index = 0; index < n; index++) {
      let streamedTokens = 0;
      if (chat) emit?.(chatChunk(meta, { role: 'assistant', content: '' }, null, index), 0);
      const result = await withSequence(entry, (sequence) =>
        generateText({
          sequence,
          promptTokens,
          maxTokens: request.max_completion_tokens ?? request.max_tokens ?? DEFAULT_MAX_TOKENS,
          temperature: request.temperature ?? DEFAULT_TEMPERATURE,
          topP: request.top_p,
          ...(request.top_k ? { topK: request.top_k } : {}),
          ...(request.min_p ? { minP: request.min_p } : {}),
          seed: request.seed === undefined ? undefined : request.seed + index,
          tokenBias: toTokenBias(model, request.logit_bias),
          ...(request.presence_penalty ? { presencePenalty: request.presence_penalty } : {}),
          ...(request.frequency_penalty ? { frequencyPenalty: request.frequency_penalty } : {}),
          ...(grammar ? { grammar } : {}),
          // A forced call ends where its grammar does: a stop string inside it would cut the JSON.
          stop: forced ? [] : stop,
          signal: job.signal,
          onText: call
            ? (text, tokens) => call.push(text, tokens)
            : emit &&
              ((text, tokens) => {
                streamedTokens += tokens;
                emit(
                  chat
                    ? chatChunk(meta, { content: text }, null, index)
                    : completionChunk(meta, text, null, index),
                  tokens,
                );
              }),
        }),
      );
      completionTokens += result.completionTokens;
      // The token ids a verifier checks are choice 0's (NODE_PROTOCOL.md §9).
      if (index === 0) job.onTokenIds?.({ prompt: [...promptTokens], completion: [...result.tokenIds] });
      if (call) return call.finish(result, usageOf(promptTokens.length, completionTokens), forced?.name);
      // Tokens whose text was never sent (a matched stop string) count in the choice's last chunk.
      const unsent = result.completionTokens - streamedTokens;
      emit?.(
        chat
          ? chatChunk(meta, {}, result.finishReason, index)
          : completionChunk(meta, '', result.finishReason, index),
        unsent,
      );
      choices.push({ text: result.text, finishReason: result.finishReason });
    }
    const usage = usageOf(promptTokens.length, completionTokens);
    return chat ? chatResponse(meta, choices, usage) : completionResponse(meta, choices, usage);
  }

  async function runEmbedding(entry: Loaded, job: RuntimeJob): Promise<JobResponse> {
    const { input, dimensions } = parseRequest('embedding', job.request);
    entry.embedding ??= entry.model.createEmbeddingContext({
      contextSize: entry.contextLength,
      threads,
    });
    const context = await entry.embedding;
    const vectors: number[][] = [];
    let promptTokens = 0;
    // One input (a string, or token ids) or many.
    const inputs: (string | number[])[] =
      typeof input === 'string' || typeof input[0] === 'number'
        ? [input as string | number[]]
        : (input as (string | number[])[]);
    const vocabulary =
      entry.model.fileInfo.metadata.tokenizer?.ggml?.tokens?.length ?? Number.POSITIVE_INFINITY;
    for (const one of inputs) {
      if (job.signal?.aborted) throw new NodeError('job_cancelled');
      if (typeof one !== 'string' && one.some((id) => id >= vocabulary)) {
        throw new NodeError('invalid_request', {
          detail: `input holds a token id past the vocabulary (${vocabulary}).`,
        });
      }
      const tokens = typeof one === 'string' ? entry.model.tokenize(one) : (one as Token[]);
      if (tokens.length >= entry.contextLength) {
        throw new NodeError('context_length_exceeded', {
          detail: `An input has ${tokens.length} tokens; the limit is ${entry.contextLength - 1}.`,
        });
      }
      promptTokens += tokens.length;
      const vector = [...(await context.getEmbeddingFor(tokens)).vector];
      if (dimensions !== undefined && dimensions > vector.length) {
        throw new NodeError('invalid_request', {
          detail: `dimensions may be at most ${vector.length} for this model.`,
        });
      }
      vectors.push(dimensions === undefined ? vector : truncated(vector, dimensions));
    }
    return embeddingResponse(job.model, vectors, promptTokens);
  }

  return {
    info: { name: 'node-llama-cpp', version: 'unknown' },

    async load(onProgress?: (progress: LoadProgress) => void) {
      try {
        if (!options.llama) {
          // The GPU backends read their device lists when the binding loads: set them first.
          for (const [name, value] of Object.entries(settings.env)) process.env[name] ??= value;
        }
        llama = options.llama ?? (await getLlama(settings.getLlama));
        this.info.version = (await getModuleVersion()) ?? 'unknown';
        for (const [index, spec] of options.models.entries()) {
          const report = (fraction: number) =>
            onProgress?.({ model: spec.id, loaded: index, total: options.models.length, fraction });
          report(0);
          const entry = await loadOne(spec, report);
          entries.push(entry);
          for (const offer of entry.offers) loaded.set(offer.id, { offer, entry });
          report(1);
        }
      } catch (error) {
        throw toNodeError(error, 'model_load_failed');
      }
    },

    models: () => [...loaded.values()].map((served) => served.offer),

    async run(job) {
      const entry = modelFor(job);
      if (job.signal?.aborted) throw new NodeError('job_cancelled');
      try {
        if (job.kind === 'embedding') return await runEmbedding(entry, job);
        if (job.kind === 'verify') return await runVerify(entry, job);
        return await runText(entry, job);
      } catch (error) {
        throw toNodeError(error, 'runtime_error');
      }
    },

    alive: () => !closed && llama !== undefined && !llama.disposed,

    async close() {
      closed = true;
      for (const entry of entries) {
        await (await entry.embedding)?.dispose();
        await entry.context?.dispose();
        await entry.model.dispose();
      }
      loaded.clear();
      entries.length = 0;
    },
  } satisfies Runtime & { info: { name: string; version: string } };
}

/** OpenAI messages as node-llama-cpp chat history, ending with the model's turn to answer. */
/**
 * The chat as the model's template renders it. Tool definitions go in a system turn first; an
 * assistant turn that called tools renders its calls as JSON, and a tool's answer renders as a
 * user turn naming the call it answers — the template's own function-calling syntax is not used
 * (few GGUF templates define one), so any chat model can follow a tool loop.
 */
function toChatHistory(messages: ChatMessage[], tools?: ChatRequest['tools']): ChatHistoryItem[] {
  const history: ChatHistoryItem[] = [];
  if (tools && tools.length > 0) {
    const listed = tools.map((t) => ({
      name: t.function.name,
      description: t.function.description,
      parameters: t.function.parameters,
    }));
    history.push({
      type: 'system',
      text: `Tools you can call, as {"name", "arguments"}: ${JSON.stringify(listed)}`,
    });
  }
  for (const message of messages) {
    const text = messageText(message);
    if (message.role === 'system' || message.role === 'developer') history.push({ type: 'system', text });
    else if (message.role === 'user') history.push({ type: 'user', text });
    else if (message.role === 'tool')
      history.push({ type: 'user', text: `Result of tool call ${message.tool_call_id ?? ''}: ${text}` });
    else if (message.tool_calls && message.tool_calls.length > 0) {
      const calls = message.tool_calls.map((c) => ({
        name: c.function.name,
        arguments: c.function.arguments,
      }));
      history.push({ type: 'model', response: [`${text}${JSON.stringify(calls)}`] });
    } else history.push({ type: 'model', response: [text] });
  }
  history.push({ type: 'model', response: [] });
  return history;
}

function stopStrings(stop: string | string[] | null | undefined): string[] {
  if (stop == null) return [];
  return (typeof stop === 'string' ? [stop] : stop).filter((s) => s.length > 0);
}

/**
 * OpenAI logit_bias (token id → -100…100, added to the logit; -100 bans the token) as a TokenBias.
 * TokenBias.set() ignores end-of-generation tokens, yet banning EOS is the standard way to ask for
 * an exact length (llama.cpp's server honours it), so biases go straight into its map (pinned
 * node-llama-cpp 3.22; the runtime tests fail if that map moves).
 */
function toTokenBias(model: LlamaModel, bias: Record<string, number> | undefined): TokenBias | undefined {
  if (!bias || Object.keys(bias).length === 0) return undefined;
  const tokenBias = new TokenBias(model.tokenizer);
  const biases = (tokenBias as unknown as { _biases: Map<Token, number> })._biases;
  for (const [token, value] of Object.entries(bias)) {
    biases.set(Number(token) as Token, value <= -100 ? Number.NEGATIVE_INFINITY : value);
  }
  return tokenBias;
}

/** The first `dimensions` components, scaled back to unit length (how OpenAI shortens embeddings). */
function truncated(vector: number[], dimensions: number): number[] {
  const head = vector.slice(0, dimensions);
  const norm = Math.hypot(...head);
  return norm > 0 ? head.map((x) => x / norm) : head;
}
