/** One GGUF file loaded: its offers, its context and the sequences jobs take turns on. */

import { freemem } from 'node:os';
import type {
  ChatWrapper,
  Llama,
  LlamaContext,
  LlamaContextSequence,
  LlamaEmbeddingContext,
  LlamaModel,
} from 'node-llama-cpp';
import { resolveChatWrapper } from 'node-llama-cpp';
import type { ModelFamily, ServedModel } from '../runtime.js';
import { cacheSequences, DEFAULT_PREFIX_CACHE_SHARE } from './cache-sequences.js';
import { decodeDispatchSchedule } from './decode-dispatch-schedule.js';
import type { llamaSettings } from './llama-settings.js';
import { SequencePool, type SequenceRequest } from './sequence-pool.js';
import { sequencesForVram } from './sequences-for-vram.js';

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
  /**
   * Memory for the KV state of recent conversations beyond the concurrent jobs' sequences (the
   * prefix cache, cache-sequences.ts); unset: {@link DEFAULT_PREFIX_CACHE_SHARE} of the memory free
   * once the weights and job sequences are counted (VRAM on a GPU, RAM on the CPU).
   */
  prefixCacheBytes?: number;
};

export const DEFAULT_CONTEXT_TOKENS = 4096;

const ENCODER_ARCHITECTURES = new Set(['bert', 'nomic-bert', 'jina-bert-v2', 't5encoder']);

/** A loaded model: its sequences (decoder models), and its embedding context once asked for. */
export type LoadedModel = {
  offers: ServedModel[];
  contextLength: number;
  model: LlamaModel;
  context?: LlamaContext;
  sequences?: SequencePool;
  chatWrapper?: ChatWrapper;
  embedding?: Promise<LlamaEmbeddingContext>;
};

/**
 * Loads one GGUF file: the model, and for a decoder one context with a sequence per concurrent
 * job (sized from free VRAM when `autoConcurrency` on a GPU), up to 4 more that keep recent
 * conversations' KV state within `prefixCacheBytes` (sequence-pool.ts), and the model's own chat template.
 * Its offers: the model under its id (chat and text offers continue a `continueFrom`,
 * NODE_PROTOCOL.md §9 "Continuing an answer"), and its pooled embeddings under `embeddingId`.
 */
export async function loadModel(
  llama: Llama,
  spec: LlamaModelSpec,
  options: {
    settings: ReturnType<typeof llamaSettings>;
    threads: number;
    report: (fraction: number) => void;
  },
): Promise<LoadedModel> {
  const model = await llama.loadModel({
    modelPath: spec.path,
    onLoadProgress: options.report,
    ...options.settings.loadModel,
  });
  const trained = model.trainContextSize;
  const contextLength = Math.min(spec.contextLength ?? DEFAULT_CONTEXT_TOKENS, trained);
  const maxConcurrency =
    spec.autoConcurrency && llama.gpu !== false && model.gpuLayers > 0
      ? sequencesForVram({
          freeVramBytes: (await llama.getVramState()).free,
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
  const decoder = family === 'chat' || family === 'text';
  const continues = decoder ? { continues: true } : {};
  // Chat jobs have prefix keys (NODE_PROTOCOL.md §9 "Prefix cache"): a chat offer says it caches.
  const caches = family === 'chat' ? { cachesPrefixes: true } : {};
  const offers: ServedModel[] = [
    { id: spec.id, family, contextLength, maxConcurrency, ...sha256, ...continues, ...caches },
  ];
  if (spec.embeddingId && family !== 'embedding') {
    offers.push({
      id: spec.embeddingId,
      family: 'embedding',
      contextLength,
      maxConcurrency,
      ...sha256,
    });
  }
  const entry: LoadedModel = { offers, contextLength, model };
  if (family !== 'embedding') {
    const sequences =
      maxConcurrency + (await prefixCacheSequences(llama, model, spec, contextLength, maxConcurrency));
    const context = await model.createContext({
      sequences,
      contextSize: contextLength,
      threads: options.threads,
      batching: { dispatchSchedule: decodeDispatchSchedule(() => entry.sequences?.busy ?? 0) },
    });
    entry.context = context;
    entry.sequences = new SequencePool(Array.from({ length: sequences }, () => context.getSequence()));
    entry.chatWrapper = resolveChatWrapper(model);
  }
  return entry;
}

/** Sequences the prefix cache adds to a decoder model's context: what its memory budget pays for. */
async function prefixCacheSequences(
  llama: Llama,
  model: LlamaModel,
  spec: LlamaModelSpec,
  contextLength: number,
  jobSequences: number,
): Promise<number> {
  const estimate = (sequences: number) => {
    const need = model.fileInsights.estimateContextResourceRequirements({
      contextSize: contextLength,
      modelGpuLayers: model.gpuLayers,
      sequences,
    });
    return need.cpuRam + need.gpuVram;
  };
  const sequenceBytes = Math.max(0, estimate(2) - estimate(1));
  const onGpu = llama.gpu !== false && model.gpuLayers > 0;
  const free = onGpu ? (await llama.getVramState()).free : freemem();
  const budgetBytes =
    spec.prefixCacheBytes ??
    Math.floor(Math.max(0, free - jobSequences * sequenceBytes) * DEFAULT_PREFIX_CACHE_SHARE);
  return cacheSequences({ budgetBytes, sequenceBytes });
}

/**
 * Runs `work` on one of a decoder model's sequences (waiting for one to be free): the one holding
 * the longest prefix of `request.prompt` (sequence-pool.ts).
 */
export function withSequence<T>(
  entry: LoadedModel,
  work: (sequence: LlamaContextSequence) => Promise<T>,
  request: SequenceRequest = {},
): Promise<T> {
  return entry.sequences!.use(request, work);
}

/** Tokens in the model's vocabulary (a token id outside it must never reach llama.cpp). */
export function vocabularySize(model: LlamaModel): number {
  const metadata = model.fileInfo.metadata as unknown as {
    tokenizer?: { ggml?: { tokens?: readonly unknown[] } };
  };
  return metadata.tokenizer?.ggml?.tokens?.length ?? 0;
}
