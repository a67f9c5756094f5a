import { availableParallelism } from 'node:os';
import { MAX_PREFIX_CACHE_MODELS, type PrefixCache } from '@gpumesh/protocol';
import { getLlama, getModuleVersion, type Llama } from 'node-llama-cpp';
import { NodeError, toNodeError } from '../../errors.js';
import type {
  JobKind,
  JobResponse,
  LoadProgress,
  ModelFamily,
  Runtime,
  RuntimeJob,
  ServedModel,
} from '../runtime.js';
import { createJsonGrammars } from './json-grammars.js';
import { llamaSettings } from './llama-settings.js';
import { type LlamaModelSpec, type LoadedModel, loadModel } from './loaded-model.js';
import { runEmbedding } from './run-embedding.js';
import { runText } from './run-text.js';
import { runVerify } from './run-verify.js';

export { decodeDispatchSchedule } from './decode-dispatch-schedule.js';
export type { LlamaModelSpec } from './loaded-model.js';

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

const KINDS_BY_FAMILY: Record<ModelFamily, JobKind[]> = {
  chat: ['chat', 'completion', 'verify'],
  text: ['completion', 'verify'],
  embedding: ['embedding'],
  // node-llama-cpp 3.22 takes no image or audio input: vision and voice go through the relay.
  vision: [],
  voice: [],
};

/**
 * The default runtime: GGUF models in this process through node-llama-cpp. Each model gets one
 * context with `maxConcurrency` sequences, so concurrent jobs share one batched decode, and a few more
 * that keep recent conversations' KV state (the prefix cache: a job runs on the sequence holding most
 * of its prompt, `cached_tokens` counts what it did not evaluate again, `prefixCache()` names what is
 * held). Chat uses the model's own chat template; usage counts are the exact tokens evaluated and sampled.
 */
export function createLlamaRuntime(options: LlamaRuntimeOptions): Runtime {
  const settings = llamaSettings({
    gpu: options.gpu ?? 'auto',
    gpuLayers: options.gpuLayers ?? 'auto',
    ...(options.gpus ? { gpus: options.gpus } : {}),
  });
  /** Offer id → the loaded model serving it (a model may be offered twice: chat and embedding). */
  const loaded = new Map<string, { offer: ServedModel; entry: LoadedModel }>();
  const entries: LoadedModel[] = [];
  let llama: Llama | undefined;
  let closed = false;
  const grammars = createJsonGrammars(() => llama!);
  const threads = options.threads ?? defaultThreads();

  function servedFor(job: RuntimeJob): { offer: ServedModel; entry: LoadedModel } {
    const served = loaded.get(job.model);
    if (!served) throw new NodeError('model_not_found', { detail: `${job.model} (${job.kind})` });
    // A kind the model's family does not take is the request's fault (NODE_PROTOCOL.md §9 "Odd jobs").
    if (!KINDS_BY_FAMILY[served.offer.family].includes(job.kind)) {
      throw new NodeError('invalid_request', { detail: `${job.model} takes no ${job.kind} jobs` });
    }
    return served;
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
          const entry = await loadModel(llama, spec, { settings, threads, report });
          entries.push(entry);
          for (const offer of entry.offers) loaded.set(offer.id, { offer, entry });
          report(1);
        }
      } catch (error) {
        throw toNodeError(error, 'model_load_failed');
      }
    },

    models: () => [...loaded.values()].map((served) => served.offer),

    prefixCache(): PrefixCache {
      const held = entries.flatMap((entry) => entry.sequences?.prefixCache() ?? []);
      return held.slice(0, MAX_PREFIX_CACHE_MODELS);
    },

    async run(job): Promise<JobResponse> {
      const { offer, entry } = servedFor(job);
      if (job.signal?.aborted) throw new NodeError('job_cancelled');
      try {
        if (job.kind === 'embedding') return await runEmbedding(entry, job, threads);
        if (job.kind === 'verify') return await runVerify(entry, offer, job);
        return await runText(entry, job, grammars);
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
