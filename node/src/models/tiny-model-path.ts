import { createHash } from 'node:crypto';
import { access } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TinyModelOptions } from '@gpumesh/protocol/conformance';
import { writeTinyModel } from './write-tiny-model.js';

/**
 * The path of a tiny model with these options, generated once into a shared cache folder
 * (`$TMPDIR/gpumesh-tiny-models` unless `dir` is given) and reused after. For tests and the local
 * network: the file name is a hash of the options, so different shapes never collide.
 */
export async function tinyModelPath(options: TinyModelOptions & { dir?: string } = {}): Promise<string> {
  const { dir = join(tmpdir(), 'gpumesh-tiny-models'), ...shape } = options;
  const key = createHash('sha256')
    .update(JSON.stringify(shape, Object.keys(shape).sort()))
    .digest('hex');
  const path = join(dir, `tiny-${key.slice(0, 16)}.gguf`);
  try {
    await access(path);
  } catch {
    await writeTinyModel({ ...shape, path });
  }
  return path;
}
