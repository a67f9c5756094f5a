import type { NodeConfig } from '../config.js';
import { NodeError } from '../errors.js';
import { modelFile } from './model-file.js';
import type { CommandInput } from './parse-args.js';
import { table } from './table.js';

/**
 * `gpumesh-node models info <file>`: a model's header facts and its memory on the GPU and the CPU,
 * and whether it fits this machine.
 * @throws NodeError `model_load_failed` when the file's header can't be read.
 */
export async function modelsInfo(config: NodeConfig, { args, values }: CommandInput): Promise<number> {
  const path = modelFile(config, args[0]);
  const [{ modelInfo }, { detectHardware }] = await Promise.all([
    import('../models/model-info.js'),
    import('../hardware/detect-hardware.js'),
  ]);
  const model = await modelInfo(path, await detectHardware()).catch((error: unknown) => {
    throw new NodeError('model_load_failed', {
      detail: `${path}: ${(error as Error).message}`,
      cause: error,
    });
  });
  if (values.json) {
    console.log(JSON.stringify(model));
    return 0;
  }
  const gib = (bytes: number) => `${(bytes / 1024 ** 3).toFixed(2)} GiB`;
  const count = (n: number) => (n >= 1e9 ? `${(n / 1e9).toFixed(2)} B` : `${(n / 1e6).toFixed(2)} M`);
  console.log(
    table([
      ['file', `${model.file} (${gib(model.sizeBytes)})`],
      [
        'model',
        `${model.architecture}, ${model.quantization}, ${count(model.parameters)} parameters, ${model.layers} layers`,
      ],
      ['context', `${model.trainedContext ?? '?'} tokens trained; estimates for ${model.contextTokens}`],
      ['on the GPU', gib(model.gpuBytes)],
      ['on the CPU', gib(model.cpuBytes)],
      [
        'fits',
        model.fits === 'gpu' ? 'on this GPU' : model.fits === 'cpu' ? 'in RAM (CPU)' : 'not on this machine',
      ],
    ]),
  );
  return 0;
}
