import {
  type Manifest,
  type ModelOffer,
  type NodeRole,
  PROTOCOL_VERSION,
  type Price,
  SCOPE_FOR_FAMILY,
  type Scope,
} from '@gpumesh/protocol';
import { DEFAULT_CACHED_INPUT_PERCENT } from './config.js';
import type { Hardware } from './hardware/detect-hardware.js';
import type { ServedModel } from './runtimes/runtime.js';
import { SOFTWARE } from './software.js';

export type BuildManifestOptions = {
  nodeId: string;
  role: NodeRole;
  hardware: Hardware;
  runtime: { name: string; version: string };
  models: ServedModel[];
  /** Price per model id; `defaultPrice` for the rest. */
  prices: Record<string, Price>;
  defaultPrice: Price;
  /** Scopes the coordinator allows at this node's tier (from `welcome`). */
  allowedScopes: readonly Scope[];
  owner?: string;
  issuedAt?: Date;
};

/**
 * The capability manifest: hardware, runtime, the models offered with their prices, and the scopes
 * they need. Models whose scope the tier does not allow are left out rather than refused later.
 */
export function buildManifest(options: BuildManifestOptions): Manifest {
  const models: ModelOffer[] = options.models
    .filter((model) => options.allowedScopes.includes(SCOPE_FOR_FAMILY[model.family]))
    .map((model) => ({
      id: model.id,
      family: model.family,
      contextLength: model.contextLength,
      maxConcurrency: model.maxConcurrency,
      price: offerPrice(options.prices[model.id] ?? options.defaultPrice, model),
      ...(model.sha256 ? { sha256: model.sha256 } : {}),
      ...(model.kinds ? { kinds: model.kinds } : {}),
      ...(model.continues ? { continues: true } : {}),
    }));
  const scopes: Scope[] = [...new Set(models.map((model) => SCOPE_FOR_FAMILY[model.family]))];
  if (options.role === 'network' && options.allowedScopes.includes('relay')) scopes.push('relay');
  // A network node holding chat or text weights verifies other nodes' completions of them.
  const verifiable = models.some((model) => model.family === 'chat' || model.family === 'text');
  if (options.role === 'network' && verifiable && options.allowedScopes.includes('verify'))
    scopes.push('verify');
  const { backend: _backend, ...hardware } = options.hardware;
  return {
    nodeId: options.nodeId,
    role: options.role,
    hardware,
    runtimes: [options.runtime],
    models,
    scopes,
    ...(options.owner ? { owner: options.owner } : {}),
    software: SOFTWARE,
    protocolVersion: PROTOCOL_VERSION,
    issuedAt: (options.issuedAt ?? new Date()).toISOString(),
  };
}

/**
 * A model's offered price: a model that caches prefixes offers its cached input price (the
 * configured one, else {@link DEFAULT_CACHED_INPUT_PERCENT} of the input price); others none.
 */
export function offerPrice(price: Price, model: ServedModel): Price {
  const { cachedInputPerMTok, ...rest } = price;
  if (!model.cachesPrefixes) return rest;
  const cached =
    cachedInputPerMTok ?? ((BigInt(price.inputPerMTok) * DEFAULT_CACHED_INPUT_PERCENT) / 100n).toString();
  return { ...rest, cachedInputPerMTok: cached };
}
