import type { HardwareSource } from '../hardware/hardware-source.js';

/** A CPU-only machine, described rather than probed (probing takes seconds): the in-process test daemons'. */
export const TEST_MACHINE: HardwareSource = {
  graphics: async () => ({ controllers: [] }),
  cpu: async () => ({ manufacturer: 'test', brand: 'cpu', cores: 2, physicalCores: 2 }),
  mem: async () => ({ total: 1024 ** 3 }),
  arch: () => 'x64',
  llamaBackends: async () => [false],
};
