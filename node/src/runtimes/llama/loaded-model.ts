/** One GGUF file loaded: its offers, its context and the sequences jobs take turns on. */
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
import { decodeDispatchSchedule } from './decode-dispatch-schedule.js';
import type { llamaSettings } from './llama-settings.js';
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
};

export const DEFAULT_CONTEXT_TOKENS = 4096;

const ENCODER_ARCHITECTURES = new Set(['bert', 'nomic-bert', 'jina-bert-v2', 't5encoder']);

/** A loaded model: sequences idle, jobs waiting for one, and its embedding context once asked for. */
export type LoadedModel = {
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
 * Loads one GGUF file: the model, and for a decoder one context with a sequence per concurrent
 * job (sized from free VRAM when `autoConcurrency` on a GPU) and the model's own chat template.
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
  const continues = family === 'chat' || family === 'text' ? { continues: true } : {};
  const offers: ServedModel[] = [
    { id: spec.id, family, contextLength, maxConcurrency, ...sha256, ...continues },
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
  const entry: LoadedModel = { offers, contextLength, model, idle: [], waiters: [] };
  if (family !== 'embedding') {
    const context = await model.createContext({
      sequences: maxConcurrency,
      contextSize: contextLength,
      threads: options.threads,
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

/** Runs `work` on one of the model's sequences, waiting for one to be free. */
export async function withSequence<T>(
  entry: LoadedModel,
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

/** Tokens in the model's vocabulary (a token id outside it must never reach llama.cpp). */
export function vocabularySize(model: LlamaModel): number {
  const metadata = model.fileInfo.metadata as unknown as {
    tokenizer?: { ggml?: { tokens?: readonly unknown[] } };
  };
  return metadata.tokenizer?.ggml?.tokens?.length ?? 0;
}
