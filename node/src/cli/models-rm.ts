import type { NodeConfig } from '../config.js';
import { NodeError } from '../errors.js';
import { modelFile } from './model-file.js';
import type { CommandInput } from './parse-args.js';

/**
 * `gpumesh-node models rm <file>`: removes a model file of the models folder.
 * @throws NodeError `config_invalid` for a name outside it, or a file that can't be removed.
 */
export async function modelsRm(config: NodeConfig, { args }: CommandInput): Promise<number> {
  const path = modelFile(config, args[0]);
  const { rm } = await import('node:fs/promises');
  await rm(path).catch((error: unknown) => {
    throw new NodeError('config_invalid', { detail: `${path}: ${(error as Error).message}`, cause: error });
  });
  console.log(`removed ${path}`);
  return 0;
}
