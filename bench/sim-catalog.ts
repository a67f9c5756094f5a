/**
 * The simulated network's models (bench/network-sim.ts): `models` catalog entries, each with one
 * known file, so every node's offer is listed under a canonical id as real known weights are
 * (coordinator/src/catalog). The first POPULAR_MODELS carry most traffic; every node serves one of
 * them and one of the long tail.
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';

/** Models most nodes serve and most requests ask for. */
export const POPULAR_MODELS = 8;

/** The catalog id of simulated model `m`. */
export function simModelId(m: number): string {
  return `sim/model-${m}`;
}

/** The (made-up) SHA-256 of simulated model `m`'s one file. */
export function simSha256(m: number): string {
  return createHash('sha256').update(`gpumesh-network-sim-model-${m}`).digest('hex');
}

/** The models node `i` serves: a popular one and one of the long tail (when there is one). */
export function simModelOf(i: number, models: number): number[] {
  const popular = i % Math.min(POPULAR_MODELS, models);
  if (models <= POPULAR_MODELS) return [popular];
  return [popular, POPULAR_MODELS + (Math.floor(i / POPULAR_MODELS) % (models - POPULAR_MODELS))];
}

/** Writes a catalog file (the coordinator's `catalogFile`) listing the simulated models. */
export function writeSimCatalog(file: string, models: number): void {
  const entries = Array.from({ length: models }, (_, m) => ({
    id: simModelId(m),
    name: `simulated model ${m}`,
    family: 'chat',
    contextLength: 4096,
    files: [{ quant: 'Q4_K_M', file: `sim-${m}.gguf`, sizeBytes: 1_000_000, sha256: simSha256(m) }],
    priceBand: { inputPerMTok: ['0', '10000000000'], outputPerMTok: ['0', '10000000000'] },
  }));
  writeFileSync(file, JSON.stringify({ models: entries }));
}

/**
 * A request's model: 9 in 10 ask for a popular model, the rest for one of the long tail that some
 * node of the `nodes` serves (simModelOf).
 */
export function pickRequestModel(random: () => number, models: number, nodes: number): string {
  const popular = Math.min(POPULAR_MODELS, models);
  const tail = Math.min(models - popular, Math.ceil(nodes / POPULAR_MODELS));
  if (tail <= 0 || random() < 0.9) return simModelId(Math.floor(random() * popular));
  return simModelId(popular + Math.floor(random() * tail));
}
