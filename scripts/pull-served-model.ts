import path from 'node:path';
import { pullModel } from '@gpumesh/node';

/** The model the local nodes serve: its folder and file, its ids on the nodes and in the catalog. */
export type ServedModel = {
  modelsDir: string;
  modelFile: string;
  id: string;
  embeddingId: string;
  /** The catalog's ids for known weights; undefined for weights the catalog does not know. */
  catalogId: string | undefined;
  catalogEmbeddingId: string | undefined;
  /** Tokens of context to serve it with (the node's default otherwise). */
  contextLength?: number;
};

/**
 * `npm start -- --model <ref>` (hf:…, a URL, or a catalog id): pulls the model (node-llama-cpp's downloader, progress logged every
 * 10 %) and checks it against the coordinator's catalog, which gives its canonical ids.
 */
export async function pullServedModel(
  ref: string,
  modelsDir: string,
  appUrl: string,
  log: (line: string) => void,
): Promise<ServedModel> {
  const res = await fetch(`${appUrl}/api/models/catalog`);
  const { models } = (await res.json()) as {
    models: { id: string; embeddingId?: string; files: { file: string; sha256?: string; url?: string }[] }[];
  };
  // A catalog id (`--model qwen/qwen2.5-0.5b-instruct`) pulls its file from where the catalog says.
  const source = models.find((m) => m.id === ref)?.files.find((f) => f.url)?.url ?? ref;
  const catalog = models.flatMap((m) =>
    m.files.map((f) => ({ modelId: m.id, file: f.file, sha256: f.sha256 })),
  );
  let shown = -1;
  const pulled = await pullModel({
    ref: source,
    modelsDir,
    catalog,
    onProgress: ({ downloadedBytes, totalBytes }) => {
      const step = totalBytes > 0 ? Math.floor((downloadedBytes / totalBytes) * 10) : 0;
      if (step !== shown) log(`pulling   ${ref}: ${step * 10}%`);
      shown = step;
    },
  });
  const known = models.find((m) => m.id === pulled.modelId);
  log(
    `model     ${path.basename(pulled.path)} (${pulled.verified === 'catalog' ? `catalog: ${pulled.modelId}` : 'not in the catalog: unverified'})`,
  );
  const id = path.basename(pulled.path, '.gguf');
  return {
    modelsDir,
    modelFile: path.basename(pulled.path),
    id,
    embeddingId: `${id}-embed`,
    catalogId: known?.id,
    catalogEmbeddingId: known?.embeddingId,
  };
}
