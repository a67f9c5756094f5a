import type { LlamaOptions } from 'node-llama-cpp';

/** How the node uses the machine's GPUs (config `gpu`, `gpuLayers`, `gpus`). */
export type GpuSettings = {
  /** `false` forces the CPU build; `'auto'` lets node-llama-cpp pick CUDA, Vulkan or Metal. */
  gpu: false | 'auto';
  /** Layers offloaded: `auto` (as many as free VRAM fits), `max` (all), or a count. */
  gpuLayers: 'auto' | 'max' | number;
  /** GPU indices to use (all when absent). */
  gpus?: readonly number[];
};

/**
 * The settings node-llama-cpp gets, in one place so tests can check them without a GPU: the
 * `getLlama` options, the `loadModel` options, and the environment the GPU backends read to choose
 * devices (CUDA_VISIBLE_DEVICES, GGML_VK_VISIBLE_DEVICES) — set before the binding loads.
 */
export function llamaSettings(settings: GpuSettings): {
  getLlama: LlamaOptions;
  loadModel: { gpuLayers: 'auto' | 'max' | number };
  env: Record<string, string>;
} {
  const devices = settings.gpus?.join(',');
  return {
    getLlama: { gpu: settings.gpu },
    // The CPU build offloads nothing, whatever was asked.
    loadModel: { gpuLayers: settings.gpu === false ? 0 : settings.gpuLayers },
    env:
      devices !== undefined && settings.gpu !== false
        ? { CUDA_VISIBLE_DEVICES: devices, GGML_VK_VISIBLE_DEVICES: devices }
        : {},
  };
}

/** `gpuLayers` as configured (`auto`, `max` or digits) → node-llama-cpp's value. */
export function parseGpuLayers(value: string): 'auto' | 'max' | number {
  return value === 'auto' || value === 'max' ? value : Number(value);
}
