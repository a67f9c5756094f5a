import { availableParallelism } from 'node:os';
import {
  type ChatHistoryItem,
  type ChatWrapper,
  getLlama,
  getModuleVersion,
  type Llama,
  type LlamaContext,
  type LlamaContextSequence,
  type LlamaEmbeddingContext,
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
};

export type LlamaRuntimeOptions = {
  models: LlamaModelSpec[];
  /** CPU threads per model context (see {@link defaultThreads}). */
  threads?: number;
  /** `false` forces the CPU build; `'auto'` lets node-llama-cpp pick CUDA, Vulkan or Metal. */
  gpu?: false | 'auto';
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
  chat: ['chat', 'completion'],
  text: ['completion'],
  embedding: ['embedding'],
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

/**
 * The default runtime: GGUF models in this process through node-llama-cpp. Each model gets one
 * context with `maxConcurrency` sequences, so concurrent jobs share one batched decode. Chat uses the
 * model's own chat template; usage counts are the exact tokens evaluated and sampled.
 */
export function createLlamaRuntime(options: LlamaRuntimeOptions): Runtime {
  /** Offer id → the loaded model serving it (a model may be offered twice: chat and embedding). */
  const loaded = new Map<string, { offer: ServedModel; entry: Loaded }>();
  const entries: Loaded[] = [];
  let llama: Llama | undefined;
  let closed = false;
  const threads = options.threads ?? defaultThreads();

  async function loadOne(spec: LlamaModelSpec, report: (fraction: number) => void): Promise<Loaded> {
    const model = await llama!.loadModel({ modelPath: spec.path, onLoadProgress: report });
    const trained = model.trainContextSize;
    const contextLength = Math.min(spec.contextLength ?? DEFAULT_CONTEXT_TOKENS, trained);
    const architecture = model.fileInfo.metadata.general.architecture;
    const family = spec.family ?? (ENCODER_ARCHITECTURES.has(String(architecture)) ? 'embedding' : 'chat');
    const offers: ServedModel[] = [
      { id: spec.id, family, contextLength, maxConcurrency: spec.maxConcurrency },
    ];
    if (spec.embeddingId && family !== 'embedding') {
      offers.push({
        id: spec.embeddingId,
        family: 'embedding',
        contextLength,
        maxConcurrency: spec.maxConcurrency,
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
        sequences: spec.maxConcurrency,
        contextSize: contextLength,
        threads,
        batching: {
          dispatchSchedule: decodeDispatchSchedule(() => spec.maxConcurrency - entry.idle.length),
        },
      });
      entry.context = context;
      for (let i = 0; i < spec.maxConcurrency; i++) entry.idle.push(context.getSequence());
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

  function modelFor(job: RuntimeJob): Loaded {
    const served = loaded.get(job.model);
    if (!served || !KINDS_BY_FAMILY[served.offer.family].includes(job.kind)) {
      throw new NodeError('model_not_found', { detail: `${job.model} (${job.kind})` });
    }
    return served.entry;
  }

  async function runText(entry: Loaded, job: RuntimeJob): Promise<JobResponse> {
    const chat = job.kind === 'chat';
    const request = chat ? parseRequest('chat', job.request) : parseRequest('completion', job.request);
    const { model } = entry;
    const stop = stopStrings(request.stop);
    let promptTokens: Token[];
    if (chat) {
      const state = entry.chatWrapper!.generateContextState({
        chatHistory: toChatHistory((request as ChatRequest).messages),
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
    const emit = job.stream ? job.onChunk : undefined;
    let streamedTokens = 0;
    if (chat) emit?.(chatChunk(meta, { role: 'assistant', content: '' }), 0);
    const result = await withSequence(entry, (sequence) =>
      generateText({
        sequence,
        promptTokens,
        maxTokens: request.max_completion_tokens ?? request.max_tokens ?? DEFAULT_MAX_TOKENS,
        temperature: request.temperature ?? DEFAULT_TEMPERATURE,
        topP: request.top_p,
        seed: request.seed,
        tokenBias: toTokenBias(model, request.logit_bias),
        stop,
        signal: job.signal,
        onText:
          emit &&
          ((text, tokens) => {
            streamedTokens += tokens;
            emit(chat ? chatChunk(meta, { content: text }) : completionChunk(meta, text), tokens);
          }),
      }),
    );
    const usage = usageOf(promptTokens.length, result.completionTokens);
    // Tokens whose text was never sent (a matched stop string) count in the last chunk.
    const unsent = result.completionTokens - streamedTokens;
    if (chat) {
      emit?.(chatChunk(meta, {}, result.finishReason), unsent);
      return chatResponse(meta, result.text, result.finishReason, usage);
    }
    emit?.(completionChunk(meta, '', result.finishReason), unsent);
    return completionResponse(meta, result.text, result.finishReason, usage);
  }

  async function runEmbedding(entry: Loaded, job: RuntimeJob): Promise<JobResponse> {
    const { input } = parseRequest('embedding', job.request);
    entry.embedding ??= entry.model.createEmbeddingContext({
      contextSize: entry.contextLength,
      threads,
    });
    const context = await entry.embedding;
    const vectors: number[][] = [];
    let promptTokens = 0;
    for (const text of typeof input === 'string' ? [input] : input) {
      if (job.signal?.aborted) throw new NodeError('job_cancelled');
      const tokens = entry.model.tokenize(text);
      if (tokens.length >= entry.contextLength) {
        throw new NodeError('invalid_request', {
          detail: `An input has ${tokens.length} tokens; the limit is ${entry.contextLength - 1}.`,
        });
      }
      promptTokens += tokens.length;
      vectors.push([...(await context.getEmbeddingFor(tokens)).vector]);
    }
    return embeddingResponse(job.model, vectors, promptTokens);
  }

  return {
    info: { name: 'node-llama-cpp', version: 'unknown' },

    async load(onProgress?: (progress: LoadProgress) => void) {
      try {
        llama = options.llama ?? (await getLlama({ gpu: options.gpu ?? 'auto' }));
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
        return job.kind === 'embedding' ? await runEmbedding(entry, job) : await runText(entry, job);
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
function toChatHistory(messages: ChatMessage[]): ChatHistoryItem[] {
  const history: ChatHistoryItem[] = messages.map((message) => {
    const text = messageText(message);
    if (message.role === 'system' || message.role === 'developer') return { type: 'system', text };
    if (message.role === 'user') return { type: 'user', text };
    return { type: 'model', response: [text] };
  });
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
