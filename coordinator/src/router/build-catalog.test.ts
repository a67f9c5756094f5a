import { describe, expect, test } from 'vitest';
import { buildCatalog } from './build-catalog.js';
import { nativeToUsdNano } from './native-to-usd-nano.js';
import { type ModelOffer, type NodeInput, PickIndex } from './pick-index.js';

const USD = 1_000_000_000n; // nanousd per USD
const NATIVE_PRICE_NANO = 2n * USD;

function offer(modelId: string, price: bigint): ModelOffer {
  return {
    modelId,
    family: 'chat',
    contextLength: 2048,
    maxConcurrency: 2,
    priceIn: price,
    priceOut: price,
    currency: 'USD',
  };
}

function node(nodeId: string, models: ModelOffer[], extra: Partial<NodeInput> = {}): NodeInput {
  return {
    nodeId,
    owner: null,
    tierRank: 0,
    scopes: new Set(['infer.chat']),
    state: 'online',
    models,
    ...extra,
  };
}

describe('buildCatalog', () => {
  test('default: live nodes count every node that serves now, verified and on probation beside', () => {
    const index = new PickIndex({ nativeToUsdNano: (wei) => nativeToUsdNano(wei, NATIVE_PRICE_NANO) });
    index.upsert(node('a', [offer('m', 1n * USD)]));
    index.upsert(node('b', [offer('m', 2n * USD)], { state: 'busy' }));
    index.upsert(node('c', [offer('m', 3n * USD), offer('n', 1n * USD)]));
    index.upsert(node('d', [offer('m', 1n * USD)], { state: 'offline' }));
    const catalog = buildCatalog(index, NATIVE_PRICE_NANO, (id) => id === 'a');
    expect(
      catalog.map(({ id, liveNodes, verifiedNodes, probationNodes }) => ({
        id,
        liveNodes,
        verifiedNodes,
        probationNodes,
      })),
    ).toEqual([
      { id: 'm', liveNodes: 3, verifiedNodes: 1, probationNodes: 2 },
      // A model served only by nodes on probation is live: they answer.
      { id: 'n', liveNodes: 1, verifiedNodes: 0, probationNodes: 1 },
    ]);
  });

  test('behavior: without trust checks every live node counts as verified', () => {
    const index = new PickIndex({ nativeToUsdNano: (wei) => nativeToUsdNano(wei, NATIVE_PRICE_NANO) });
    index.upsert(node('a', [offer('m', 1n * USD)]));
    expect(buildCatalog(index, NATIVE_PRICE_NANO)[0]).toMatchObject({
      liveNodes: 1,
      verifiedNodes: 1,
      probationNodes: 0,
    });
  });
});
