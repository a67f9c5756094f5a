import type { NodeConfig } from '../config.js';
import type { CommandInput } from './parse-args.js';
import { table } from './table.js';

/** `gpumesh-node models`: the local GGUF models, how they will be offered, and at what prices. */
export async function modelsList(config: NodeConfig, { values }: CommandInput): Promise<number> {
  const json = values.json === true;
  if (config.runtime === 'openai' && json) {
    console.log(JSON.stringify({ runtime: 'openai', openaiUrl: config.openaiUrl, models: [] }));
    return 0;
  }
  if (config.runtime === 'openai') {
    console.log(`Models come from ${config.openaiUrl}; run doctor to list them.`);
    return 0;
  }
  const { listLocalModels } = await import('../runtimes/local-models.js');
  const local = await listLocalModels(config);
  if (json) {
    console.log(
      JSON.stringify({
        modelsDir: config.modelsDir,
        models: local.map(({ file, path, sha256, id, embeddingId, family, maxConcurrency, price }) => ({
          file,
          path,
          sha256,
          id,
          family: family ?? 'chat',
          ...(embeddingId ? { embeddingId } : {}),
          maxConcurrency,
          price,
        })),
      }),
    );
    return 0;
  }
  if (local.length === 0) {
    console.log(`No .gguf files in ${config.modelsDir}.`);
    return 0;
  }
  // USD prices as dollars (the config's unit is nanousd); native ones in whole tokens.
  const unit = (base: string, currency: string) =>
    currency === 'USD' ? `$${(Number(base) / 1e9).toFixed(4)}` : `${(Number(base) / 1e18).toFixed(6)} native`;
  const price = (p: { currency: string; inputPerMTok: string; outputPerMTok: string }) =>
    `${unit(p.inputPerMTok, p.currency)} in / ${unit(p.outputPerMTok, p.currency)} out per M tokens`;
  const rows = [['FILE', 'SHA-256', 'OFFERED AS', 'CONCURRENCY', 'PRICE']];
  for (const model of local) {
    rows.push([
      model.file,
      `${model.sha256?.slice(0, 12) ?? '?'}…`,
      `${model.id} (${model.family ?? 'chat'})`,
      String(model.maxConcurrency),
      price(model.price),
    ]);
    if (model.embeddingId)
      rows.push([
        '',
        '',
        `${model.embeddingId} (embedding)`,
        String(model.maxConcurrency),
        price(model.embeddingPrice),
      ]);
  }
  console.log(table(rows));
  return 0;
}
