import type { Price } from '@gpumesh/protocol';
import type { Llama } from 'node-llama-cpp';
import { DEFAULT_MAX_CONCURRENCY, type NodeConfig } from '../config.js';
import { createLlamaRuntime } from './llama/llama-runtime.js';
import { parseGpuLayers } from './llama/llama-settings.js';
import { listLocalModels } from './local-models.js';
import { createOpenAiRuntime } from './openai/openai-runtime.js';
import type { Runtime } from './runtime.js';
import { createVoiceRuntime, ESPEAK_MODEL_ID, POCKETSPHINX_MODEL_ID } from './voice/voice-runtime.js';

/** The configured runtime, and the price of each model id it will offer. */
export async function createRuntime(
  config: NodeConfig,
  options: { llama?: Llama } = {},
): Promise<{ runtime: Runtime; prices: Record<string, Price> }> {
  const prices: Record<string, Price> = {};
  const voicePrice: Price = {
    ...config.price,
    inputPerSecond: config.pricePerAudioSecond,
    inputPerMChar: config.pricePerMChar,
  };
  if (config.runtime === 'voice') {
    const runtime = createVoiceRuntime({
      ...(config.voicePhrases ? { phrases: config.voicePhrases.split('|') } : {}),
      ...(config.maxConcurrency ? { maxConcurrency: config.maxConcurrency } : {}),
    });
    prices[ESPEAK_MODEL_ID] = voicePrice;
    prices[POCKETSPHINX_MODEL_ID] = voicePrice;
    return { runtime, prices };
  }
  if (config.runtime === 'openai') {
    for (const model of config.models)
      prices[model.id] = model.price
        ? { ...model.price, inputPerSecond: config.pricePerAudioSecond, inputPerMChar: config.pricePerMChar }
        : voicePrice;
    const runtime = createOpenAiRuntime({
      baseUrl: config.openaiUrl!,
      ...(config.openaiApiKey ? { apiKey: config.openaiApiKey } : {}),
      ...(config.models.length > 0
        ? {
            models: config.models.map((model) => ({
              id: model.id,
              ...(model.upstream ? { upstream: model.upstream } : {}),
              ...(model.family ? { family: model.family } : {}),
              ...(model.kinds ? { kinds: [...model.kinds] } : {}),
              ...(model.contextLength ? { contextLength: model.contextLength } : {}),
              maxConcurrency: model.maxConcurrency ?? config.maxConcurrency ?? DEFAULT_MAX_CONCURRENCY,
            })),
          }
        : {}),
    });
    return { runtime, prices };
  }
  const models = await listLocalModels(config);
  for (const model of models) {
    prices[model.id] = model.price;
    if (model.embeddingId) prices[model.embeddingId] = model.embeddingPrice;
  }
  const runtime = createLlamaRuntime({
    models,
    gpu: config.gpu === 'cpu' ? false : 'auto',
    gpuLayers: parseGpuLayers(config.gpuLayers),
    ...(config.gpus ? { gpus: config.gpus.split(',').map(Number) } : {}),
    ...(config.threads ? { threads: config.threads } : {}),
    ...(options.llama ? { llama: options.llama } : {}),
  });
  return { runtime, prices };
}
