import { basename, join } from 'node:path';
import type { NodeConfig } from '../config.js';
import { NodeError } from '../errors.js';

/**
 * A model file in the models folder, by its name (never a path elsewhere).
 * @throws NodeError `config_invalid` for anything but a bare `.gguf` file name.
 */
export function modelFile(config: NodeConfig, file: string | undefined): string {
  if (!file || file !== basename(file) || !file.endsWith('.gguf')) {
    throw new NodeError('config_invalid', { detail: `expected a .gguf file name in ${config.modelsDir}.` });
  }
  return join(config.modelsDir, file);
}
