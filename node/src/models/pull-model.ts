/**
 * `gpumesh-node models pull <ref>`: a GGUF from Hugging Face (`hf:<user>/<repo>/<file>.gguf`,
 * `hf:<user>/<repo>:<quant>`) or any `https://…/x.gguf`, through node-llama-cpp's own downloader
 * (ipull: parallel connections, resumes a partial download), into the models folder; then its
 * SHA-256 is checked against the coordinator's catalog (a known hash is verified; a file named as
 * a catalog file with another hash is refused) or a pinned `--sha256`. A mismatch removes the file: a tampered or corrupted download is never served.
 */
import { rm } from 'node:fs/promises';
import { basename } from 'node:path';
import { createModelDownloader } from 'node-llama-cpp';
import { NodeError } from '../errors.js';
import { fileSha256 } from './file-sha256.js';

/**
 * A file the coordinator's catalog knows (GET /api/models/catalog). Without `sha256` (not pinned
 * yet) it verifies nothing: a file of its name is neither checked nor given the catalog's id.
 */
export type CatalogFile = { modelId: string; file: string; sha256?: string };

export type PullProgress = {
  downloadedBytes: number;
  totalBytes: number;
  bytesPerSecond: number;
  etaS: number;
};

export type PullOptions = {
  ref: string;
  modelsDir: string;
  /** The catalog's files (the coordinator's); a file of the same name must match its hash. */
  catalog?: readonly CatalogFile[];
  /** The expected SHA-256, whatever the catalog says. */
  sha256?: string;
  /** node-llama-cpp's own progress bar (a TTY). */
  showCliProgress?: boolean;
  onProgress?: (progress: PullProgress) => void;
  /** The Hugging Face endpoint (default: node-llama-cpp's, `HF_ENDPOINT` or huggingface.co). */
  huggingFaceEndpoint?: string;
};

export type PullResult = {
  path: string;
  sha256: string;
  sizeBytes: number;
  /** How the file was checked: against the catalog, against `--sha256`, or not at all. */
  verified: 'catalog' | 'pinned' | 'unverified';
  /** The canonical id the coordinator will list it under (catalog-verified files). */
  modelId?: string;
};

/** How long the source may take to answer at all before the pull fails (offline, unreachable). */
export const REACH_TIMEOUT_MS = 10_000;

/**
 * Fails fast when `ref`'s host does not answer: node-llama-cpp's downloader retries a host it
 * can't reach for minutes, saying nothing.
 */
async function checkReachable(ref: string, huggingFaceEndpoint: string | undefined): Promise<void> {
  const hf = /^(hf|huggingface):|^(hf\.co|huggingface\.co)\//.test(ref);
  const origin = hf
    ? new URL(huggingFaceEndpoint ?? process.env.HF_ENDPOINT ?? 'https://huggingface.co').origin
    : URL.canParse(ref)
      ? new URL(ref).origin
      : undefined;
  if (!origin) return;
  try {
    const res = await fetch(origin, { method: 'HEAD', signal: AbortSignal.timeout(REACH_TIMEOUT_MS) });
    await res.body?.cancel();
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
    throw new NodeError('model_download_failed', {
      detail: `${ref}: ${origin} could not be reached (${cause}); is this machine offline?`,
      cause: error,
    });
  }
}

export async function pullModel(options: PullOptions): Promise<PullResult> {
  let path: string;
  let sizeBytes = 0;
  await checkReachable(options.ref, options.huggingFaceEndpoint);
  try {
    const downloader = await createModelDownloader({
      modelUri: options.ref,
      dirPath: options.modelsDir,
      showCliProgress: options.showCliProgress ?? false,
      ...(options.huggingFaceEndpoint ? { endpoints: { huggingFace: options.huggingFaceEndpoint } } : {}),
      onProgress: ({ totalSize, downloadedSize, estimatedTimeLeft, averageSpeed }) => {
        sizeBytes = totalSize;
        options.onProgress?.({
          downloadedBytes: downloadedSize,
          totalBytes: totalSize,
          bytesPerSecond: averageSpeed,
          etaS: estimatedTimeLeft,
        });
      },
    });
    path = await downloader.download();
  } catch (error) {
    throw new NodeError('model_download_failed', {
      detail: `${options.ref}: ${error instanceof Error ? error.message : String(error)}`,
      cause: error,
    });
  }
  const sha256 = await fileSha256(path);
  // The catalog knows the weights by hash; a file named as a catalog file (node-llama-cpp may
  // prefix an hf: download's name, `hf_<user>_<file>`) must have that file's hash.
  const name = basename(path);
  const known = options.catalog?.find((file) => file.sha256 === sha256);
  const namesake = options.catalog?.find((file) => name === file.file || name.endsWith(`_${file.file}`));
  const expected = options.sha256?.toLowerCase() ?? (known ? undefined : namesake?.sha256);
  if (expected && expected !== sha256) {
    await rm(path, { force: true });
    throw new NodeError('model_checksum_mismatch', {
      detail: `${basename(path)} has SHA-256 ${sha256}, expected ${expected} (${options.sha256 ? '--sha256' : 'the catalog'}); the file was removed.`,
    });
  }
  return {
    path,
    sha256,
    sizeBytes,
    verified: options.sha256 ? 'pinned' : known ? 'catalog' : 'unverified',
    ...(known && !options.sha256 ? { modelId: known.modelId } : {}),
  };
}
