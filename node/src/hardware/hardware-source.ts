import { arch } from 'node:os';
import { getLlamaGpuTypes } from 'node-llama-cpp';
import si from 'systeminformation';

/** A graphics controller as systeminformation reports it (only the fields we read). */
export type GraphicsController = {
  vendor: string;
  model: string;
  name?: string;
  /** Total memory in MiB, or null when unknown. */
  vram: number | null;
  /** Total and free memory in MiB (NVIDIA through nvidia-smi). */
  memoryTotal?: number;
  memoryFree?: number;
  driverVersion?: string;
};

/** Backends node-llama-cpp can run on this machine: `false` stands for the CPU build. */
export type LlamaBackend = 'cuda' | 'vulkan' | 'metal' | false;

/**
 * Where hardware facts come from. Production reads systeminformation and node-llama-cpp; a test
 * passes its own object to describe any machine (say, one with 4 GPUs).
 */
export type HardwareSource = {
  graphics(): Promise<{ controllers: GraphicsController[] }>;
  cpu(): Promise<{ manufacturer: string; brand: string; cores: number; physicalCores: number }>;
  mem(): Promise<{ total: number }>;
  arch(): string;
  /** Backends whose libraries, drivers and prebuilt binaries are present, best first. */
  llamaBackends(): Promise<LlamaBackend[]>;
};

/** The real machine, through systeminformation and node-llama-cpp's own backend probe. */
export const systemHardwareSource: HardwareSource = {
  graphics: () => si.graphics(),
  cpu: () => si.cpu(),
  mem: () => si.mem(),
  arch: () => arch(),
  llamaBackends: () => getLlamaGpuTypes('supported'),
};
