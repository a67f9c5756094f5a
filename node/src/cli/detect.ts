import type { NodeConfig } from '../config.js';
import type { Hardware } from '../hardware/detect-hardware.js';
import type { CommandInput } from './parse-args.js';
import { table } from './table.js';

/** `gpumesh-node detect`: this machine's hardware; `--json`: the manifest's hardware part. */
export async function detect(_config: NodeConfig, { values }: CommandInput): Promise<number> {
  const { detectHardware } = await import('../hardware/detect-hardware.js');
  const hardware = await detectHardware();
  if (values.json) {
    const { backend: _backend, ...manifestPart } = hardware;
    console.log(JSON.stringify(manifestPart, null, 2));
    return 0;
  }
  console.log(formatHardware(hardware));
  return 0;
}

/** Hardware as an aligned table. */
function formatHardware(hardware: Hardware): string {
  const gib = (bytes: number) => `${(bytes / 1024 ** 3).toFixed(1)} GiB`;
  const rows: string[][] = [
    [
      'CPU',
      `${hardware.cpu.model} — ${hardware.cpu.cores} cores, ${hardware.cpu.threads} threads, ${hardware.cpu.arch}`,
    ],
    ['RAM', gib(hardware.ramBytes)],
    ['Backend', hardware.backend],
    ...hardware.gpus.map((gpu) => [
      `GPU ${gpu.index}`,
      `${gpu.vendor} ${gpu.name} — ${gib(gpu.vramTotalBytes)} (${gib(gpu.vramFreeBytes)} free), driver ${gpu.driver || 'unknown'}, ${gpu.backend}`,
    ]),
  ];
  if (hardware.gpus.length === 0) rows.push(['GPUs', 'none found']);
  return table(rows);
}
