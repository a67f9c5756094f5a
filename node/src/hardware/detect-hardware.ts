import { NodeError } from '../errors.js';
import {
  type GraphicsController,
  type HardwareSource,
  type LlamaBackend,
  systemHardwareSource,
} from './hardware-source.js';

/** Compute backends, as the manifest names them. */
export type Backend = 'cuda' | 'vulkan' | 'metal' | 'rocm' | 'cpu';

export type Gpu = {
  index: number;
  vendor: string;
  name: string;
  vramTotalBytes: number;
  vramFreeBytes: number;
  driver: string;
  /** The backend this GPU runs models with here; `cpu` when no GPU build can drive it. */
  backend: Backend;
};

/** The hardware part of the manifest, plus the backend node-llama-cpp will use. */
export type Hardware = {
  gpus: Gpu[];
  cpu: { model: string; cores: number; threads: number; arch: string };
  ramBytes: number;
  /** What node-llama-cpp runs models with on this machine. */
  backend: Backend;
};

const MIB = 1024 * 1024;

/** Backends each GPU vendor can use, best first. */
const BACKENDS_BY_VENDOR: [pattern: RegExp, backends: Backend[]][] = [
  [/nvidia/i, ['cuda', 'vulkan']],
  [/amd|advanced micro|ati\b/i, ['rocm', 'vulkan']],
  [/apple/i, ['metal']],
  [/intel/i, ['vulkan']],
];

/**
 * Detects every GPU (not only the first), the CPU and RAM, and the backend node-llama-cpp can use.
 * Display adapters with no memory of their own (virtual consoles, BMC chips) are still listed:
 * the owner should see what the machine has, and the backend says whether it is usable.
 */
export async function detectHardware(source: HardwareSource = systemHardwareSource): Promise<Hardware> {
  try {
    const [graphics, cpu, mem, llamaBackends] = await Promise.all([
      source.graphics(),
      source.cpu(),
      source.mem(),
      source.llamaBackends(),
    ]);
    const usable = llamaBackends.map((b): Backend => (b === false ? 'cpu' : b));
    const gpus = graphics.controllers.map((controller, index) => toGpu(controller, index, usable));
    const gpuBackend = gpus.find((gpu) => gpu.backend !== 'cpu')?.backend;
    return {
      gpus,
      cpu: {
        model: [cpu.manufacturer, cpu.brand].filter(Boolean).join(' ').trim() || 'unknown',
        cores: cpu.physicalCores,
        threads: cpu.cores,
        arch: source.arch(),
      },
      ramBytes: mem.total,
      backend: gpuBackend ?? firstBackend(llamaBackends),
    };
  } catch (error) {
    throw new NodeError('hardware_detection_failed', { cause: error });
  }
}

function toGpu(controller: GraphicsController, index: number, usable: Backend[]): Gpu {
  const totalMib = controller.memoryTotal ?? controller.vram ?? 0;
  const candidates = BACKENDS_BY_VENDOR.find(([pattern]) => pattern.test(controller.vendor))?.[1] ?? [];
  return {
    index,
    vendor: controller.vendor || 'unknown',
    name: controller.name || controller.model || 'unknown',
    vramTotalBytes: Math.round(totalMib * MIB),
    vramFreeBytes: Math.round((controller.memoryFree ?? totalMib) * MIB),
    driver: controller.driverVersion ?? '',
    backend: candidates.find((backend) => usable.includes(backend)) ?? 'cpu',
  };
}

function firstBackend(backends: LlamaBackend[]): Backend {
  return backends.find((b) => b !== false) || 'cpu';
}
