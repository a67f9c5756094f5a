import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { copyFile, mkdir, readFile, rename, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MINI_CHAT_ID } from './network-defaults.js';
import type { ServedModel } from './pull-served-model.js';

/** The quantisation npm start's nodes serve of gpumesh/mini-chat. */
export const MINI_CHAT_QUANT = 'F16';
/**
 * Every pinned file of gpumesh/mini-chat, which npm start's coordinator verifier holds: with the
 * cheaper files beside the served one, a check also scores the answer on each of them, and a node
 * serving Q4_0 or Q8_0 behind the F16 claim is convicted (trust/checks/substitution-ratio.ts).
 */
export const MINI_CHAT_QUANTS = ['F16', 'Q8_0', 'Q4_0'] as const;

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CATALOG = path.join(ROOT, 'coordinator/src/catalog/models.json');
const FILES_DIR = path.join(ROOT, 'models/mini-chat');

type CatalogEntry = {
  id: string;
  contextLength: number;
  embeddingId?: string;
  files: { quant: string; file: string; sha256?: string }[];
};

/**
 * The committed mini-chat file of `quant`, checked against the hash the catalog pins for it and
 * copied into `modelsDir` (where the node serves it and the coordinator verifies it): a file
 * whose SHA-256 differs from the catalog's is refused, both hashes named.
 */
export async function miniChatModel(modelsDir: string, quant = MINI_CHAT_QUANT): Promise<ServedModel> {
  const { models } = JSON.parse(await readFile(CATALOG, 'utf8')) as { models: CatalogEntry[] };
  const entry = models.find((m) => m.id === MINI_CHAT_ID);
  const pinned = entry?.files.find((f) => f.quant === quant);
  if (!entry || !pinned?.sha256) throw new Error(`the catalog pins no ${quant} file for ${MINI_CHAT_ID}`);
  const source = path.join(FILES_DIR, pinned.file);
  await checkCatalogHash(source, pinned.sha256, `${MINI_CHAT_ID} ${quant}`);
  await mkdir(modelsDir, { recursive: true });
  const target = path.join(modelsDir, pinned.file);
  const same = await stat(target).then(
    async (s) => s.size === (await stat(source)).size && (await sha256Of(target)) === pinned.sha256,
    () => false,
  );
  if (!same) {
    const partial = `${target}.${process.pid}.partial`;
    await copyFile(source, partial);
    await rename(partial, target);
  }
  const id = path.basename(pinned.file, '.gguf');
  return {
    modelsDir,
    modelFile: pinned.file,
    id,
    embeddingId: `${id}-embed`,
    catalogId: entry.id,
    catalogEmbeddingId: entry.embeddingId,
    contextLength: entry.contextLength,
  };
}

/** Refuses a file whose SHA-256 is not the one the catalog pins, naming both. */
export async function checkCatalogHash(file: string, expected: string, what: string): Promise<void> {
  const actual = await sha256Of(file);
  if (actual !== expected) {
    throw new Error(
      `${path.relative(ROOT, file)} has SHA-256 ${actual}, but the catalog pins ${expected} for ${what}: refusing to serve it (a changed or corrupted file; restore it with git checkout, or retrain and pin the new hash)`,
    );
  }
}

function sha256Of(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    createReadStream(file)
      .on('data', (chunk) => hash.update(chunk))
      .on('error', reject)
      .on('end', () => resolve(hash.digest('hex')));
  });
}
