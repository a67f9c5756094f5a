import si from 'systeminformation';
import { describe, expect, test } from 'vitest';
import { NodeError } from '../errors.js';
import { detectHardware } from './detect-hardware.js';
import type { HardwareSource } from './hardware-source.js';

const GIB = 1024 ** 3;

/** A rented 4-GPU box: three NVIDIA cards and one AMD card, with the CUDA build installed. */
const fourGpuMachine: HardwareSource = {
  graphics: async () => ({
    controllers: [
      ...[0, 1, 2].map((i) => ({
        vendor: 'NVIDIA Corporation',
        model: 'NVIDIA GeForce RTX 4090',
        vram: 24564,
        memoryTotal: 24564,
        memoryFree: 24000 - i * 1000,
        driverVersion: '550.54.14',
      })),
      { vendor: 'Advanced Micro Devices, Inc. [AMD/ATI]', model: 'Radeon RX 7900 XTX', vram: 24576 },
    ],
  }),
  cpu: async () => ({ manufacturer: 'AMD', brand: 'EPYC 7443P', cores: 48, physicalCores: 24 }),
  mem: async () => ({ total: 256 * GIB }),
  arch: () => 'x64',
  llamaBackends: async () => ['cuda', 'vulkan', false],
};

describe('detectHardware', () => {
  test('default: this machine, as systeminformation reports it', async () => {
    const [hardware, cpu, mem, graphics] = await Promise.all([
      detectHardware(),
      si.cpu(),
      si.mem(),
      si.graphics(),
    ]);
    expect(hardware.cpu.model).toBe(`${cpu.manufacturer} ${cpu.brand}`);
    expect(hardware.cpu.cores).toBe(cpu.physicalCores);
    expect(hardware.cpu.threads).toBe(cpu.cores);
    expect(hardware.ramBytes).toBe(mem.total);
    expect(hardware.gpus).toHaveLength(graphics.controllers.length);
  });

  test('behavior: lists every GPU of a 4-GPU machine', async () => {
    const hardware = await detectHardware(fourGpuMachine);
    expect(hardware.gpus).toHaveLength(4);
    expect(hardware.gpus.map((gpu) => gpu.index)).toEqual([0, 1, 2, 3]);
    expect(hardware.gpus[0]).toEqual({
      index: 0,
      vendor: 'NVIDIA Corporation',
      name: 'NVIDIA GeForce RTX 4090',
      vramTotalBytes: 24564 * 1024 * 1024,
      vramFreeBytes: 24000 * 1024 * 1024,
      driver: '550.54.14',
      backend: 'cuda',
    });
    expect(hardware.gpus[2]!.vramFreeBytes).toBe(22000 * 1024 * 1024);
    // No ROCm build is present, so the AMD card runs through Vulkan.
    expect(hardware.gpus[3]).toMatchObject({
      vendor: 'Advanced Micro Devices, Inc. [AMD/ATI]',
      backend: 'vulkan',
    });
    expect(hardware.cpu).toEqual({ model: 'AMD EPYC 7443P', cores: 24, threads: 48, arch: 'x64' });
    expect(hardware.ramBytes).toBe(256 * GIB);
    expect(hardware.backend).toBe('cuda');
  });

  test('behavior: GPUs without a GPU build fall back to the CPU backend', async () => {
    const hardware = await detectHardware({ ...fourGpuMachine, llamaBackends: async () => [false] });
    expect(hardware.gpus.every((gpu) => gpu.backend === 'cpu')).toBe(true);
    expect(hardware.backend).toBe('cpu');
  });

  test('error: a failing source is wrapped', async () => {
    const broken = { ...fourGpuMachine, mem: () => Promise.reject(new Error('EACCES /proc/meminfo')) };
    await expect(detectHardware(broken)).rejects.toMatchObject({ code: 'hardware_detection_failed' });
    await expect(detectHardware(broken)).rejects.toBeInstanceOf(NodeError);
  });
});
