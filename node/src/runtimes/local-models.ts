import { readdir } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Price } from '@gpumesh/protocol';
import { DEFAULT_MAX_CONCURRENCY, type NodeConfig } from '../config.js';
import { NodeError } from '../errors.js';
import { fileSha256 } from '../models/file-sha256.js';
import type { LlamaModelSpec } from './llama/llama-runtime.js';

/** A GGUF file in the models folder and how it will be offered. */
export type LocalModel = LlamaModelSpec & { file: string; price: Price; embeddingPrice: Price };

/**
 * The GGUF files in `config.modelsDir` (sorted by name), each with its offer: id (file name without
 * `.gguf` unless a `models` entry names the file), concurrency, context and price.
 */
export async function listLocalModels(config: NodeConfig): Promise<LocalModel[]> {
  let files: string[];
  try {
    files = (await readdir(config.modelsDir)).filter((file) => file.endsWith('.gguf')).sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new NodeError('config_invalid', { detail: `Cannot read ${config.modelsDir}.`, cause: error });
  }
  const hashes = join(config.stateDir, 'model-hashes.json');
  const models: LocalModel[] = [];
  for (const file of files) {
    const setting = config.models.find((model) => model.file === file);
    const id = setting?.id ?? basename(file, '.gguf');
    const embeddingId = setting?.embeddingId ?? (config.offerEmbeddings ? `${id}-embed` : undefined);
    const price = setting?.price ?? config.price;
    const path = join(config.modelsDir, file);
    models.push({
      file,
      id,
      path,
      sha256: await fileSha256(path, hashes),
      maxConcurrency: setting?.maxConcurrency ?? config.maxConcurrency ?? DEFAULT_MAX_CONCURRENCY,
      ...(setting?.maxConcurrency === undefined && config.maxConcurrency === undefined
        ? { autoConcurrency: true }
        : {}),
      ...(setting?.contextLength ? { contextLength: setting.contextLength } : {}),
      ...(config.prefixCacheBytes !== undefined ? { prefixCacheBytes: config.prefixCacheBytes } : {}),
      ...(setting?.family ? { family: setting.family } : {}),
      ...(embeddingId ? { embeddingId } : {}),
      price,
      embeddingPrice: { ...price, outputPerMTok: '0' },
    });
  }
  return models;
}
