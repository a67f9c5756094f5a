import { type Manifest, SCOPE_FOR_FAMILY, type Scope, type TierName } from '@gpumesh/protocol';
import { TIER_BENEFITS } from '@gpumesh/protocol/internal';
import type { ModelOffer } from '../router/pick-index.js';
import { offerFingerprint } from './offer-fingerprint.js';
import { supportedParameters } from './supported-parameters.js';

/**
 * How a node's offers are listed (catalog/catalog.ts is one): a canonical id for known weights,
 * `<nodeId>/<name>` for unknown ones; and the GGUF type of a known file (`provider.quantizations`).
 */
export type ListedIds = {
  listedId(model: Manifest['models'][number], nodeId: string): string;
  quantOf(sha256: string): string | undefined;
};

/**
 * The models the coordinator routes to a node: those whose family's scope was granted, each under
 * the id the catalog lists it by (a canonical id for known weights, `<nodeId>/<name>` for unknown
 * ones); the first offer wins when two map to one id.
 */
export function routableModels(
  manifest: Manifest,
  scopes: readonly Scope[],
  tier: TierName,
  catalog: ListedIds | undefined,
): ModelOffer[] {
  const tierCap = TIER_BENEFITS[tier].maxConcurrency;
  const byId = new Map<string, ModelOffer>();
  for (const m of manifest.models) {
    if (!scopes.includes(SCOPE_FOR_FAMILY[m.family])) continue;
    const voice = m.family === 'voice' ? voicePricing(m) : undefined;
    if (m.family === 'voice' && !voice) continue; // no priced voice job: nothing to route
    const modelId = catalog ? catalog.listedId(m, manifest.nodeId) : m.id;
    if (byId.has(modelId)) continue;
    const sha256 = m.sha256?.toLowerCase();
    const quant = sha256 ? catalog?.quantOf(sha256) : undefined;
    byId.set(modelId, {
      modelId,
      ...(modelId !== m.id ? { nodeModelId: m.id } : {}),
      family: m.family,
      contextLength: m.contextLength,
      maxConcurrency: Math.min(m.maxConcurrency, tierCap),
      priceIn: voice?.priceIn ?? BigInt(m.price.inputPerMTok),
      priceOut: voice ? 0n : BigInt(m.price.outputPerMTok),
      ...(cachedPrice(m) !== undefined && !voice ? { priceCachedIn: cachedPrice(m)! } : {}),
      currency: m.price.currency,
      ...(sha256 ? { sha256 } : {}),
      ...(quant ? { quant } : {}),
      ...(voice ? { kinds: voice.kinds, ...voice.prices } : {}),
      ...(m.continues ? { continues: true } : {}),
      fingerprint: offerFingerprint(manifest, m),
      parameters: supportedParameters(manifest, m),
    });
  }
  return [...byId.values()];
}

/**
 * The offer's price per million cached input tokens (protocol v0.5's `cachedInputPerMTok`, at most
 * its input price: the manifest check refuses a larger one), when it has one.
 */
function cachedPrice(m: Manifest['models'][number]): bigint | undefined {
  const cached = m.price.cachedInputPerMTok;
  return cached === undefined ? undefined : BigInt(cached);
}

/**
 * A voice offer's routed kinds — those it names in `kinds` and prices (inputPerSecond for
 * transcription and translation, inputPerMChar for speech) — and the price it sorts by, per
 * million of its first kind's billing units (milliseconds of audio, characters); undefined when
 * it prices none (NODE_PROTOCOL.md §9 "Units and prices").
 */
function voicePricing(
  m: Manifest['models'][number],
): { kinds: string[]; priceIn: bigint; prices: { perSecond?: bigint; perMChar?: bigint } } | undefined {
  const perSecond = m.price.inputPerSecond === undefined ? undefined : BigInt(m.price.inputPerSecond);
  const perMChar = m.price.inputPerMChar === undefined ? undefined : BigInt(m.price.inputPerMChar);
  const kinds = (m.kinds ?? []).filter((k) => (k === 'speech' ? perMChar : perSecond) !== undefined);
  if (kinds.length === 0) return undefined;
  const priceIn = kinds[0] === 'speech' ? perMChar! : perSecond! * 1000n;
  return {
    kinds,
    priceIn,
    prices: {
      ...(perSecond !== undefined ? { perSecond } : {}),
      ...(perMChar !== undefined ? { perMChar } : {}),
    },
  };
}
