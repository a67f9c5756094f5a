import type { NodeConfig } from '../config.js';
import { NodeError } from '../errors.js';
import { fetchCatalogModels } from './fetch-catalog.js';
import type { CommandInput } from './parse-args.js';
import { USAGE } from './usage.js';

/**
 * `gpumesh-node models pull <ref> [--sha256 HEX]`: downloads a GGUF into the models folder through
 * node-llama-cpp's downloader, then checks it against the coordinator's catalog (or --sha256).
 * @throws NodeError `config_invalid` for a --sha256 that is not 64 hex digits.
 */
export async function modelsPull(config: NodeConfig, { args, values }: CommandInput): Promise<number> {
  const ref = args[0];
  if (!ref) {
    console.error(`models pull needs a model reference.\n\n${USAGE}`);
    return 2;
  }
  if (values.sha256 !== undefined && !/^[0-9a-fA-F]{64}$/.test(values.sha256)) {
    throw new NodeError('config_invalid', { detail: '--sha256: expected 64 hex digits.' });
  }
  const { pullModel } = await import('../models/pull-model.js');
  const models = await fetchCatalogModels(config.coordinator);
  const catalog = models?.flatMap((model) =>
    model.files.map((file) => ({ modelId: model.id, file: file.file, sha256: file.sha256 })),
  );
  // A catalog id (gpumesh/tiny-chat) pulls the model's first file from where the catalog says.
  const listed = models?.find((m) => m.id === ref);
  let source = ref;
  let unpinned = false;
  if (listed) {
    const file = listed.files.find((f) => f.url);
    if (!file?.url) {
      console.error(`${ref}: the catalog names no download source for it; pull a file by hf:… or URL.`);
      return 1;
    }
    source = file.url;
    unpinned = !file.sha256;
    if (listed.licence) console.error(`${ref}: licence ${listed.licence.name} (${listed.licence.url})`);
  }
  if (!catalog)
    console.error(`warning: the coordinator's catalog could not be read; the file is not verified.`);
  const tty = process.stderr.isTTY === true && values.json !== true;
  let shownStep = -1;
  // The rate of this run's bytes (a resumed pull starts part way), not the downloader's average.
  let first: { at: number; bytes: number } | undefined;
  const result = await pullModel({
    ref: source,
    modelsDir: config.modelsDir,
    ...(catalog ? { catalog } : {}),
    ...(values.sha256 ? { sha256: values.sha256 } : {}),
    showCliProgress: tty,
    onProgress: ({ downloadedBytes, totalBytes }) => {
      if (tty || totalBytes <= 0) return;
      first ??= { at: performance.now(), bytes: downloadedBytes };
      const step = Math.floor((downloadedBytes / totalBytes) * 10);
      if (step === shownStep) return;
      shownStep = step;
      const mib = (bytes: number) => `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
      const seconds = (performance.now() - first.at) / 1000;
      const rate = seconds > 0.2 ? (downloadedBytes - first.bytes) / seconds : 0;
      const left = rate > 0 ? `, about ${Math.ceil((totalBytes - downloadedBytes) / rate)} s left` : '';
      console.error(
        `pulling ${ref}: ${step * 10}% (${mib(downloadedBytes)} of ${mib(totalBytes)}${rate > 0 ? `, ${mib(rate)}/s` : ''}${left})`,
      );
    },
  });
  if (values.json) {
    console.log(JSON.stringify(result));
    return 0;
  }
  console.log(`${result.path}\nsha256 ${result.sha256}`);
  console.log(
    result.verified === 'catalog'
      ? `verified against the catalog: served as ${result.modelId}`
      : result.verified === 'pinned'
        ? 'verified against --sha256'
        : unpinned
          ? `unverified: the catalog has not pinned ${ref}'s hash yet; served under this node\u2019s own id (<nodeId>/<name>) until the coordinator's catalog lists this sha256`
          : 'not in the catalog: served under this node\u2019s own id (<nodeId>/<name>), unverified',
  );
  return 0;
}
