/**
 * What a GGUF file is and what it needs, read from its header (node-llama-cpp's GGUF reader and
 * insights; no weights are loaded): architecture, quantisation, parameters, layers, trained
 * context, and the memory it takes fully on the GPU or on the CPU with a context of `contextSize`
 * — and whether that fits this machine.
 */
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { GgufFileType, GgufInsights, readGgufFileInfo } from 'node-llama-cpp';
import type { Hardware } from '../hardware/detect-hardware.js';

export type ModelInfo = {
  file: string;
  sizeBytes: number;
  architecture: string;
  /** The file's quantisation (llama.cpp's file type name, e.g. MOSTLY_Q4_K_M). */
  quantization: string;
  parameters: number;
  layers: number;
  trainedContext: number | null;
  /** Memory for the weights plus one context of `contextTokens`, all layers on the GPU. */
  gpuBytes: number;
  /** The same on the CPU (no offload). */
  cpuBytes: number;
  contextTokens: number;
  /** Where it fits on this machine: the GPU with the most free VRAM, RAM, or neither. */
  fits: 'gpu' | 'cpu' | 'no';
};

export async function modelInfo(path: string, hardware: Hardware, contextSize = 4096): Promise<ModelInfo> {
  const [info, { size }] = await Promise.all([readGgufFileInfo(path), stat(path)]);
  const insights = await GgufInsights.from(info);
  const layers = insights.totalLayers;
  const contextTokens = Math.min(contextSize, insights.trainContextSize ?? contextSize);
  const need = (gpuLayers: number) => {
    const model = insights.estimateModelResourceRequirements({ gpuLayers });
    const context = insights.estimateContextResourceRequirements({
      contextSize: contextTokens,
      modelGpuLayers: gpuLayers,
    });
    return { vram: model.gpuVram + context.gpuVram, ram: model.cpuRam + context.cpuRam };
  };
  const onGpu = need(layers);
  const onCpu = need(0);
  const freeVram = Math.max(0, ...hardware.gpus.map((gpu) => gpu.vramFreeBytes));
  const fileType = info.metadata.general.file_type;
  return {
    file: basename(path),
    sizeBytes: size,
    architecture: String(info.metadata.general.architecture),
    quantization: fileType === undefined ? 'unknown' : String(fileTypeName(fileType)),
    parameters: insights.totalParameters,
    layers,
    trainedContext: insights.trainContextSize ?? null,
    gpuBytes: onGpu.vram + onGpu.ram,
    cpuBytes: onCpu.ram,
    contextTokens,
    fits:
      freeVram > 0 && onGpu.vram <= freeVram ? 'gpu' : onCpu.ram <= hardware.ramBytes * 0.8 ? 'cpu' : 'no',
  };
}

/** llama.cpp's name of a GGUF file type number (general.file_type), e.g. Q4_K_M. */
function fileTypeName(fileType: number): string {
  return (GgufFileType[fileType] ?? `type ${fileType}`).replace(/^(MOSTLY|ALL)_/, '');
}
