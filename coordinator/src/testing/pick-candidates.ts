import type { Entry, ModelOffer } from '../router/pick-index.js';
import { PickIndex } from '../router/pick-index.js';

const USD = 1_000_000_000n;

/**
 * Nodes a, b, c… serving model m at the given input prices (nanousd per million tokens; output
 * $1, cached as given), as a pick returns them: best first.
 */
export function pickCandidates(...prices: { in: bigint; cached?: bigint }[]): Entry[] {
  const index = new PickIndex({ nativeToUsdNano: (wei) => wei });
  prices.forEach((price, i) => {
    const offer: ModelOffer = {
      modelId: 'm',
      family: 'chat',
      contextLength: 4096,
      maxConcurrency: 2,
      priceIn: price.in,
      priceOut: USD,
      ...(price.cached !== undefined ? { priceCachedIn: price.cached } : {}),
      currency: 'USD',
    };
    index.upsert({
      nodeId: String.fromCharCode(97 + i),
      owner: null,
      tierRank: 0,
      scopes: new Set(['infer.chat']),
      state: 'online',
      models: [offer],
    });
  });
  const pick = index.pick({ modelId: 'm', limit: 10 });
  if (!pick.ok) throw new Error('no pick');
  return [...pick.candidates];
}
