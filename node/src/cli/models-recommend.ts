import type { NodeConfig } from '../config.js';
import { NodeError } from '../errors.js';
import { fetchCatalogModels } from './fetch-catalog.js';
import type { CommandInput } from './parse-args.js';
import { table } from './table.js';

/**
 * `gpumesh-node models recommend`: the catalog's files that fit this machine, smallest first: a
 * file fits the GPU when the memory it needs (the catalog's `memoryBytes` at a 4,096-token
 * context, else its size plus a fifth) is within the most free VRAM of one GPU, the CPU when
 * within 80 % of RAM. Each row says whether the catalog has pinned the file's hash.
 * @throws NodeError `model_download_failed` when the coordinator's catalog can't be read.
 */
export async function modelsRecommend(config: NodeConfig, { values }: CommandInput): Promise<number> {
  const { detectHardware } = await import('../hardware/detect-hardware.js');
  const [catalog, hardware] = await Promise.all([fetchCatalogModels(config.coordinator), detectHardware()]);
  if (!catalog)
    throw new NodeError('model_download_failed', { detail: "the coordinator's catalog could not be read." });
  const freeVram = Math.max(0, ...hardware.gpus.map((gpu) => gpu.vramFreeBytes));
  const fitting = catalog
    .flatMap((model) =>
      model.files.map((file) => {
        const need = file.memoryBytes ?? Math.ceil(file.sizeBytes * 1.2);
        const fits = freeVram >= need ? 'gpu' : hardware.ramBytes * 0.8 >= need ? 'cpu' : 'no';
        return {
          modelId: model.id,
          family: model.family,
          parameters: model.parameters ?? null,
          licence: model.licence?.name ?? null,
          quant: file.quant,
          file: file.file,
          sizeBytes: file.sizeBytes,
          memoryBytes: need,
          verified: Boolean(file.sha256),
          fits,
        };
      }),
    )
    .filter((file) => file.fits !== 'no')
    .sort((a, b) => a.sizeBytes - b.sizeBytes);
  if (values.json) {
    console.log(JSON.stringify({ freeVramBytes: freeVram, ramBytes: hardware.ramBytes, models: fitting }));
    return 0;
  }
  const mib = (bytes: number) => `${(bytes / 1024 ** 2).toFixed(0)} MiB`;
  console.log(
    table([
      ['MODEL', 'PARAMS', 'QUANT', 'SIZE', 'MEMORY', 'FITS', 'HASH', 'LICENCE'],
      ...fitting.map((f) => [
        f.modelId,
        f.parameters ?? '',
        f.quant,
        mib(f.sizeBytes),
        mib(f.memoryBytes),
        f.fits === 'gpu' ? 'GPU' : 'CPU (RAM)',
        f.verified ? 'pinned' : 'unverified',
        f.licence ?? '',
      ]),
    ]),
  );
  return 0;
}
