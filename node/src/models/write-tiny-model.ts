import { mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { buildTinyModel, type TinyModelOptions } from '@gpumesh/protocol/conformance';

/** Options of {@link writeTinyModel}: where to write, plus the model's shape and seed. */
export type WriteTinyModelOptions = TinyModelOptions & {
  /** Destination file; parent folders are created. */
  path: string;
};

/**
 * Writes a random-weight GGUF llama model (see {@link buildTinyModel}) to `path`. The file appears
 * atomically (written beside it, then renamed), so a concurrent reader never sees half a model.
 * Returns the path and the size in bytes.
 */
export async function writeTinyModel(
  options: WriteTinyModelOptions,
): Promise<{ path: string; bytes: number }> {
  const { path, ...shape } = options;
  const bytes = buildTinyModel(shape);
  await mkdir(dirname(path), { recursive: true });
  const partial = `${path}.${process.pid}.${Date.now()}.partial`;
  await writeFile(partial, bytes);
  await rename(partial, path);
  return { path, bytes: bytes.length };
}
